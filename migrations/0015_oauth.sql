-- Sign-in with OpenID Connect and OAuth 2.0 providers (worker/auth/oidc.ts). oauth_states: a started sign-in (its
-- state stored as SHA-256, the PKCE verifier and nonce), taken once by the callback. oauth_exchanges: the one-time
-- code the app exchanges for a session (SHA-256). oauth_identities: a provider's subject linked to an account.
CREATE TABLE oauth_states (
  state_hash TEXT PRIMARY KEY NOT NULL,
  provider TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  nonce TEXT,
  redirect_url TEXT NOT NULL,
  link_user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  expires_at INTEGER NOT NULL
);
CREATE INDEX oauth_states_expiry ON oauth_states (expires_at);

CREATE TABLE oauth_exchanges (
  code_hash TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  expires_at INTEGER NOT NULL
);
CREATE INDEX oauth_exchanges_expiry ON oauth_exchanges (expires_at);

CREATE TABLE oauth_identities (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  subject TEXT NOT NULL,
  email TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX oauth_identities_subject ON oauth_identities (provider, subject);
CREATE INDEX oauth_identities_user ON oauth_identities (user_id, id);
