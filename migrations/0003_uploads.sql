-- Resumable uploads (see worker/db/schema.ts `uploads`, `uploadParts`): an R2 multipart upload and its parts,
-- until it is completed into a file record or aborted.
CREATE TABLE uploads (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  r2_upload_id TEXT NOT NULL,
  key TEXT NOT NULL,
  name TEXT NOT NULL,
  extension TEXT NOT NULL,
  prefix TEXT NOT NULL DEFAULT '',
  file_modified_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX uploads_key_unique ON uploads (key);
CREATE INDEX uploads_user ON uploads (user_id, id);
CREATE TABLE upload_parts (
  upload_id TEXT NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
  part_number INTEGER NOT NULL,
  etag TEXT NOT NULL,
  size INTEGER NOT NULL,
  PRIMARY KEY (upload_id, part_number)
);
