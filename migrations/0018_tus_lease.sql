-- tus: a PATCH that carries what is left of its upload holds the upload's offset while R2 joins the parts, before its
-- one batch writes the offset and the file record (worker/files/tus.ts): lease_until is when the hold ends, and
-- lease_holders counts the completing PATCHes under it. No other PATCH's claim moves the offset meanwhile.
ALTER TABLE uploads ADD COLUMN lease_until INTEGER;
ALTER TABLE uploads ADD COLUMN lease_holders INTEGER NOT NULL DEFAULT 0;
