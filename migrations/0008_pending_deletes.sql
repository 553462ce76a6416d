-- R2 keys whose delete failed (see worker/db/schema.ts `pendingDeletes`, worker/files/objects.ts), retried by the
-- scheduled sweep (worker/index.ts `scheduled`).
CREATE TABLE pending_deletes (
  key TEXT PRIMARY KEY NOT NULL,
  attempts INTEGER NOT NULL,
  error TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX pending_deletes_age ON pending_deletes (created_at);
