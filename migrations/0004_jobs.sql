-- Conversion jobs and their steps (see worker/db/schema.ts `jobs`, `jobSteps`).
CREATE TABLE jobs (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  file_id TEXT NOT NULL,
  status TEXT NOT NULL,
  options TEXT NOT NULL DEFAULT '{}',
  callback_url TEXT,
  error TEXT,
  error_status INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE INDEX jobs_user ON jobs (user_id, id);
CREATE INDEX jobs_file ON jobs (file_id, id);
CREATE TABLE job_steps (
  id TEXT PRIMARY KEY NOT NULL,
  job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  source_file_id TEXT NOT NULL,
  converter TEXT NOT NULL,
  part_start INTEGER NOT NULL DEFAULT -1,
  part_end INTEGER,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  output_ids TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX job_steps_unique ON job_steps (job_id, source_file_id, part_start);
CREATE INDEX job_steps_job ON job_steps (job_id);
