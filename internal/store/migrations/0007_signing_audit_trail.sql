-- The sign request's audit trail (its events' type, timestamp and data, as
-- JSON), so that verification shows the signing event as recorded. The
-- request's limits bound it; it holds no document content. Signings
-- recorded before this migration keep an empty trail.
ALTER TABLE signings ADD COLUMN audit_trail TEXT NOT NULL DEFAULT '[]';
