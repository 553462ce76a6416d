-- Previews (see worker/db/schema.ts `previews`) and conversion targets (`jobs.target`).
CREATE TABLE previews (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  size INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (file_id, key)
);
CREATE UNIQUE INDEX previews_key_unique ON previews (key);
CREATE INDEX previews_user ON previews (user_id);
ALTER TABLE jobs ADD COLUMN target TEXT;
-- One active job per file, content, options and target: a conversion to text and the seed's chain are different jobs.
DROP INDEX jobs_active_unique;
CREATE UNIQUE INDEX jobs_active_unique ON jobs (file_id, source_key, options, COALESCE(target, '')) WHERE status IN ('queued', 'running');
