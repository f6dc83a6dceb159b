-- Per-key overrides of the default limits (quire keys limit, /admin).
-- A NULL column keeps the default of the setting; 0 means no limit. A key
-- without a row has the defaults. rate_per_ms is the rate's window.
CREATE TABLE key_limits (
	key_id TEXT PRIMARY KEY,
	max_concurrent INTEGER,
	rate_n INTEGER,
	rate_per_ms BIGINT,
	quota INTEGER,
	updated_at BIGINT NOT NULL
);
