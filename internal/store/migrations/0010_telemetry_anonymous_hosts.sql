-- Editor library 2.x (issue 26): opens without a document id (stored with
-- document_id '') and, per license, an optional list of the customer's own
-- hosts; an open from another host is marked other_host when received, so
-- that a later change of the list never changes a count already made.
-- Neither kind is counted in documents or document_days (they hold what is
-- billed per document); every open is counted in open_days.

-- The customer's hosts, lower case, separated by commas; '' = no list.
ALTER TABLE licenses ADD COLUMN hosts TEXT NOT NULL DEFAULT '';

-- Opens per license key and UTC day, all of them: the opens of a report,
-- and the anonymous and other-host ones among them.
CREATE TABLE open_days (
    day              BIGINT NOT NULL,
    license_key      TEXT NOT NULL,
    month            BIGINT NOT NULL, -- UTC month of day, as YYYY*12 + MM-1
    opens            BIGINT NOT NULL,
    anonymous_opens  BIGINT NOT NULL, -- without a document id
    other_host_opens BIGINT NOT NULL, -- from a host not in the license's list
    PRIMARY KEY (day, license_key)
) /*sqlite: WITHOUT ROWID*/;

-- On SQLite the events live in the event log, which gets the column when
-- it is opened (store.openEventLog). On PostgreSQL the fold of other
-- instances is held off (its lock, see store.countSome) while the counts
-- made so far are copied.
/*postgres:*/
SELECT pg_advisory_xact_lock(7261746366);
ALTER TABLE telemetry_events ADD COLUMN other_host BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE telemetry_pending ADD COLUMN other_host BOOLEAN NOT NULL DEFAULT false;
/*:postgres*/

INSERT INTO open_days (day, license_key, month, opens, anonymous_opens, other_host_opens)
    SELECT day, license_key, MIN(month), SUM(opens), 0, 0 FROM document_days GROUP BY day, license_key;
