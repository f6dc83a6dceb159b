-- Metering of API operations: per key, UTC day and operation (convert,
-- sign, annotate, verify), the answers of 200/202 and what they processed.
-- Rows are only ever incremented, in the same transaction for every
-- request of a group commit, before the answers are sent.
CREATE TABLE api_usage (
	key_id TEXT NOT NULL,
	day BIGINT NOT NULL,
	month BIGINT NOT NULL,
	operation TEXT NOT NULL,
	requests BIGINT NOT NULL,
	documents BIGINT NOT NULL,
	pages BIGINT NOT NULL,
	input_bytes BIGINT NOT NULL,
	engine_ms BIGINT NOT NULL,
	PRIMARY KEY (key_id, day, operation)
) /*sqlite: WITHOUT ROWID*/;

CREATE INDEX api_usage_day ON api_usage (day);
