-- Conversion failures keep their error code (worker/errors.ts), chosen by the converter that failed, and the API
-- answers it as stored. Rows failed before have theirs derived once here from the status they kept (and, for 413,
-- the quota's own message). error_status is still written for the Workers of the deploy before; a later migration
-- drops it.
ALTER TABLE jobs ADD COLUMN error_code TEXT;
ALTER TABLE previews ADD COLUMN error_code TEXT;
CREATE TABLE status_codes_0017 (status INTEGER PRIMARY KEY NOT NULL, code TEXT NOT NULL);
INSERT INTO status_codes_0017 (status, code) VALUES
  (413, 'FILE_TOO_LARGE'), (415, 'UNSUPPORTED_FORMAT'), (502, 'CONVERTER_MISCONFIGURED'), (503, 'CONVERTER_UNAVAILABLE'), (504, 'CONVERTER_TIMEOUT');
UPDATE jobs SET error_code = CASE
  WHEN error_status = 413 AND error LIKE '%storage quota exceeded%' THEN 'QUOTA_EXCEEDED'
  ELSE COALESCE((SELECT code FROM status_codes_0017 WHERE status = jobs.error_status), 'CONVERSION_FAILED')
END WHERE status = 'failed';
UPDATE previews SET error_code = CASE
  WHEN error_status = 413 AND error LIKE 'storage quota exceeded%' THEN 'QUOTA_EXCEEDED'
  ELSE COALESCE((SELECT code FROM status_codes_0017 WHERE status = previews.error_status), 'CONVERSION_FAILED')
END WHERE status = 'failed';
DROP TABLE status_codes_0017;
