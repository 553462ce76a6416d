-- API keys for servers (worker/auth/api-keys.ts): `efk_` and 43 base64url characters, stored only as SHA-256 (a
-- 256-bit random key needs no slow hash). `security_stamp` is the user's stamp when the key was made: a password
-- reset or "sign out everywhere" gives the user a new one and so ends the key; deleting the user deletes it.
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  scopes TEXT NOT NULL,
  security_stamp TEXT NOT NULL,
  expires_at INTEGER,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER
);
CREATE UNIQUE INDEX api_keys_hash_unique ON api_keys (key_hash);
CREATE INDEX api_keys_user ON api_keys (user_id, id);
