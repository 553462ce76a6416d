-- Records of custom models (worker/rules/resources.ts): one table, fields as JSON. Expression indexes on the
-- fields rules filter by are created by the Worker (CREATE INDEX IF NOT EXISTS); the relation key user_id is
-- the common one and is indexed here.
CREATE TABLE records (
  id TEXT PRIMARY KEY NOT NULL,
  model TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX records_model ON records (model, id);
CREATE INDEX records_user_id ON records (model, json_extract(data, '$.user_id'));
