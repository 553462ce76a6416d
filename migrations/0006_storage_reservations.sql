-- Quota reservations (see worker/db/schema.ts `storageReservations`, worker/files/quota.ts). Usage is computed
-- from the files table plus these rows, so there is no usage counter to backfill or to drift; the index on
-- (user_id, size) lets the sum read the index alone.
CREATE TABLE storage_reservations (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  bytes INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX storage_reservations_user ON storage_reservations (user_id, expires_at);
CREATE INDEX files_user_size ON files (user_id, size);
