-- Previews are drawn by the consumer Worker (worker/previews/draw.ts), never in an API request: a row is written
-- `queued` when a preview is first asked for, becomes `ready` with its size when the consumer has stored it, or
-- `failed` with the reason and the status its conversion would answer (see worker/db/schema.ts `previews`).
ALTER TABLE previews ADD COLUMN status TEXT NOT NULL DEFAULT 'ready';
ALTER TABLE previews ADD COLUMN error TEXT;
ALTER TABLE previews ADD COLUMN error_status INTEGER;
ALTER TABLE previews ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE previews SET updated_at = created_at;
CREATE INDEX previews_status ON previews (status, updated_at);
