-- Commercial license keys, each tied to an organization (spec 5).
CREATE TABLE licenses (
    key          TEXT PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    organization TEXT NOT NULL,
    email        TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    revoked_at   BIGINT
);
CREATE INDEX licenses_email ON licenses (email);

-- One row per document and license key: the unit of billing. Kept forever.
-- (WITHOUT ROWID on SQLite: the key is the table, one B-tree fewer to write.)
-- Times are when quire received the opens, not what the client claimed.
CREATE TABLE documents (
    license_key TEXT NOT NULL,
    document_id TEXT NOT NULL,
    first_seen  BIGINT NOT NULL,
    last_seen   BIGINT NOT NULL,
    opens       BIGINT NOT NULL,
    first_day   BIGINT NOT NULL, -- UTC day of first_seen (days since 1970-01-01)
    first_month BIGINT NOT NULL, -- UTC month of first_seen, as YYYY*12 + MM-1
    PRIMARY KEY (license_key, document_id)
) /*sqlite: WITHOUT ROWID*/;
CREATE INDEX documents_first_day ON documents (first_day, license_key);

-- Opens per document and UTC day, so that "active documents" of any period
-- can be counted after the raw events are gone. Kept forever.
-- Day first: reports read day ranges, and the key doubles as their index.
CREATE TABLE document_days (
    day         BIGINT NOT NULL,
    license_key TEXT NOT NULL,
    document_id TEXT NOT NULL,
    month       BIGINT NOT NULL, -- UTC month of day, as YYYY*12 + MM-1
    opens       BIGINT NOT NULL,
    PRIMARY KEY (day, license_key, document_id)
) /*sqlite: WITHOUT ROWID*/;

-- The raw events, kept for QUIRE_TELEMETRY_RETENTION for billing disputes.
-- No client address, user agent, URL path or cookie is ever stored.
CREATE TABLE telemetry_events (
    license_key         TEXT NOT NULL,
    document_id         TEXT NOT NULL,
    received_at         BIGINT NOT NULL,
    occurred_at         TEXT NOT NULL,  -- the client's timestamp, as sent
    document_created_at TEXT,
    library_version     TEXT NOT NULL,
    hostname            TEXT NOT NULL,
    metadata            TEXT NOT NULL   -- JSON, size-capped
);
-- Only the index that retention needs: every index costs each write, and a
-- dispute about one document can afford a scan.
CREATE INDEX telemetry_events_received ON telemetry_events (received_at);
