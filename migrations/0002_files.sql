-- Stored files and their conversions (see worker/db/schema.ts `files`).
CREATE TABLE files (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  parent_id TEXT,
  name TEXT NOT NULL,
  extension TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  hash TEXT NOT NULL,
  key TEXT NOT NULL,
  prefix TEXT NOT NULL DEFAULT '',
  file_modified_at INTEGER,
  part_index INTEGER,
  part_total INTEGER,
  metadata TEXT NOT NULL DEFAULT '{}',
  job_id TEXT,
  origin_key TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX files_key_unique ON files (key);
CREATE UNIQUE INDEX files_origin_unique ON files (origin_key);
CREATE INDEX files_user_id ON files (user_id, id);
CREATE INDEX files_parent ON files (parent_id, part_index);
