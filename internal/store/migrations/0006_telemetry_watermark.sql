-- SQLite: intake writes one row per open, the raw event, and the telemetry
-- writer folds the events after a watermark into documents and
-- document_days (store.CountPending). SQLite has one writer at a time, so
-- ids follow the order of the commits and a watermark never passes an
-- event still to come. PostgreSQL keeps telemetry_pending: there, ids are
-- drawn before commits that end in any order, and another instance's
-- transaction may commit an id below a watermark after it was set.
--
-- The pending opens are folded before their table goes; every event
-- already written is then counted, so the watermark starts at the last.
-- The events get an explicit AUTOINCREMENT id: VACUUM may renumber
-- implicit rowids, and a table emptied by retention would otherwise hand
-- out ids below the watermark again.
/*sqlite:
INSERT INTO documents (license_key, document_id, first_seen, last_seen, opens, first_day, first_month)
    SELECT license_key, document_id, MIN(received_at), MAX(received_at), COUNT(*), MIN(day), MIN(month)
    FROM telemetry_pending WHERE true GROUP BY license_key, document_id
    ON CONFLICT (license_key, document_id) DO UPDATE SET
    opens = documents.opens + excluded.opens,
    last_seen = max(documents.last_seen, excluded.last_seen),
    first_day = CASE WHEN excluded.first_seen < documents.first_seen THEN excluded.first_day ELSE documents.first_day END,
    first_month = CASE WHEN excluded.first_seen < documents.first_seen THEN excluded.first_month ELSE documents.first_month END,
    first_seen = min(documents.first_seen, excluded.first_seen);
INSERT INTO document_days (day, license_key, document_id, month, opens)
    SELECT day, license_key, document_id, MIN(month), COUNT(*)
    FROM telemetry_pending WHERE true GROUP BY day, license_key, document_id
    ON CONFLICT (day, license_key, document_id) DO UPDATE SET opens = document_days.opens + excluded.opens;
DROP TABLE telemetry_pending;

CREATE TABLE telemetry_events_new (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    license_key         TEXT NOT NULL,
    document_id         TEXT NOT NULL,
    received_at         BIGINT NOT NULL,
    occurred_at         TEXT NOT NULL,
    document_created_at TEXT,
    library_version     TEXT NOT NULL,
    hostname            TEXT NOT NULL,
    metadata            TEXT NOT NULL
);
INSERT INTO telemetry_events_new (id, license_key, document_id, received_at, occurred_at, document_created_at,
    library_version, hostname, metadata)
    SELECT rowid, license_key, document_id, received_at, occurred_at, document_created_at, library_version, hostname, metadata
    FROM telemetry_events ORDER BY rowid;
DROP TABLE telemetry_events;
ALTER TABLE telemetry_events_new RENAME TO telemetry_events;

CREATE TABLE telemetry_folded (
    only     INTEGER PRIMARY KEY CHECK (only = 1),
    event_id BIGINT NOT NULL -- every event up to this id is counted
);
INSERT INTO telemetry_folded (only, event_id) SELECT 1, COALESCE(MAX(id), 0) FROM telemetry_events;
*/
