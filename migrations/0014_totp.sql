-- A second factor (worker/auth/totp.ts): one TOTP secret an account (RFC 6238), encrypted with a key derived from
-- JWT_SECRET, enforced once `confirmed_at` is set; `last_used_step` refuses a code used before (RFC 6238 §5.2).
-- Recovery codes are stored only as SHA-256 (80 random bits each), and spent once.
CREATE TABLE totp_factors (
  user_id TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  secret TEXT NOT NULL,
  confirmed_at INTEGER,
  last_used_step INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);

CREATE TABLE recovery_codes (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  used_at INTEGER
);
CREATE UNIQUE INDEX recovery_codes_hash_unique ON recovery_codes (code_hash);
CREATE INDEX recovery_codes_user ON recovery_codes (user_id);
