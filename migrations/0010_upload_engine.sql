-- One upload engine for the resumable API and tus (see worker/db/schema.ts `uploads`, worker/files/resumable.ts):
-- the part size fixed at the start (R2: every part but the last the same size), the declared length, the bytes
-- received so far (tus's offset) with the incomplete tail kept as its own object, an expiry for the scheduled
-- sweep, and the file record a completed upload became.
ALTER TABLE uploads ADD COLUMN protocol TEXT NOT NULL DEFAULT 'parts';
ALTER TABLE uploads ADD COLUMN part_bytes INTEGER NOT NULL DEFAULT 5242880;
ALTER TABLE uploads ADD COLUMN length INTEGER;
ALTER TABLE uploads ADD COLUMN offset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE uploads ADD COLUMN tail_key TEXT;
ALTER TABLE uploads ADD COLUMN tail_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE uploads ADD COLUMN next_part INTEGER NOT NULL DEFAULT 1;
ALTER TABLE uploads ADD COLUMN patch_id TEXT;
ALTER TABLE uploads ADD COLUMN metadata TEXT;
ALTER TABLE uploads ADD COLUMN file_id TEXT;
ALTER TABLE uploads ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX uploads_expiry ON uploads (expires_at);
