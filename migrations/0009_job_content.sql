-- A step belongs to the content it read (see worker/db/schema.ts `jobs`, `jobSteps`): the R2 key the file had
-- when the job or step was made (a replace always writes a new key). Rows from before have NULL: not checked.
ALTER TABLE jobs ADD COLUMN source_key TEXT;
ALTER TABLE job_steps ADD COLUMN source_key TEXT;
-- One conversion per content and options at a time: a second equal request answers the job already running.
CREATE UNIQUE INDEX jobs_active_unique ON jobs (file_id, source_key, options) WHERE status IN ('queued', 'running');
-- Converted files are named "<name> (<n> of <m>)", the extension only in `extension` (the seed's rule): names
-- made before ("manual (1 of 3).png", "s6 (1 of 1) (1 of 1).png") are rebuilt from the uploaded file at the top
-- of their chain. Only names in the old generated shape change; a converted file its owner renamed keeps its name.
WITH RECURSIVE up(id, ancestor, depth) AS (
  SELECT id, parent_id, 0 FROM files WHERE parent_id IS NOT NULL AND part_index IS NOT NULL AND part_total IS NOT NULL
  UNION ALL
  SELECT up.id, files.parent_id, up.depth + 1 FROM up JOIN files ON files.id = up.ancestor
  WHERE files.parent_id IS NOT NULL AND up.depth < 64
),
top AS (
  SELECT up.id, files.name, files.extension FROM up JOIN files ON files.id = up.ancestor WHERE files.parent_id IS NULL
),
base AS (
  SELECT id, CASE WHEN extension != '' AND lower(substr(name, -length(extension))) = lower(extension)
    THEN substr(name, 1, length(name) - length(extension)) ELSE name END AS name FROM top
)
UPDATE files SET name = (SELECT base.name FROM base WHERE base.id = files.id) || ' (' || (part_index + 1) || ' of ' || part_total || ')'
WHERE id IN (SELECT id FROM base)
  AND name GLOB '* (*[0-9] of *[0-9])' || replace(replace(replace(extension, '[', '[[]'), '*', '[*]'), '?', '[?]');
