-- Opens committed at intake but not yet counted into documents and
-- document_days. Intake appends an open here and to telemetry_events, two
-- appends at the end of their tables, instead of updating three rows
-- scattered over the counts; the telemetry writer then folds the pending
-- opens into the counts in bulk (store.CountPending), and every read of the
-- counts folds them first, so that reports include every committed open.
CREATE TABLE telemetry_pending (
    license_key TEXT NOT NULL,
    document_id TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    day         BIGINT NOT NULL, -- UTC day of received_at
    month       BIGINT NOT NULL  -- UTC month of received_at, as YYYY*12 + MM-1
);

-- SQLite expires raw events in rowid order, which is the order of their
-- commits and so of their receipt (see DeleteEventsBefore): the index on
-- received_at would be one more B-tree for intake to write per open.
-- PostgreSQL has no such order and keeps the index.
/*sqlite: DROP INDEX telemetry_events_received; */
