-- Passkeys (WebAuthn, worker/auth/passkeys.ts): several per account, each a credential id and its COSE public key,
-- with the signature counter the authenticator reports. passkey_challenges: a challenge given out for one
-- registration (bound to its user) or one sign-in, stored as SHA-256 and taken once.
CREATE TABLE passkeys (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  credential_id TEXT NOT NULL,
  public_key TEXT NOT NULL,
  counter INTEGER NOT NULL DEFAULT 0,
  transports TEXT NOT NULL DEFAULT '[]',
  device_type TEXT NOT NULL,
  backed_up INTEGER NOT NULL DEFAULT 0,
  name TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  last_used_at INTEGER
);
CREATE UNIQUE INDEX passkeys_credential_unique ON passkeys (credential_id);
CREATE INDEX passkeys_user ON passkeys (user_id, id);

CREATE TABLE passkey_challenges (
  challenge_hash TEXT PRIMARY KEY NOT NULL,
  purpose TEXT NOT NULL,
  user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  expires_at INTEGER NOT NULL
);
CREATE INDEX passkey_challenges_expiry ON passkey_challenges (expires_at);
