-- Jobs (issue 28): a request accepted with Prefer: respond-async, kept
-- with everything needed to run it again (the route, query, headers and
-- body; never the API key, only its id), then its answer (status, the
-- headers that carry meaning, body) until expires_at. River's own tables
-- hold the queue; river_id links the two. runs counts the starts of the
-- work, so that a test can see each job ran once.
CREATE TABLE jobs (
	id TEXT PRIMARY KEY,
	key_id TEXT NOT NULL,
	operation TEXT NOT NULL,
	status TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	started_at BIGINT,
	finished_at BIGINT,
	expires_at BIGINT,
	error TEXT NOT NULL DEFAULT '',
	runs BIGINT NOT NULL DEFAULT 0,
	river_id BIGINT,
	method TEXT NOT NULL,
	target TEXT NOT NULL,
	request_header TEXT NOT NULL,
	request_body /*postgres:*/BYTEA/*:postgres*/ /*sqlite: BLOB*/ NOT NULL,
	result_status BIGINT,
	result_header TEXT,
	result_body /*postgres:*/BYTEA/*:postgres*/ /*sqlite: BLOB*/,
	webhook_url TEXT NOT NULL DEFAULT '',
	webhook_attempts BIGINT NOT NULL DEFAULT 0,
	webhook_delivered_at BIGINT,
	webhook_last_error TEXT NOT NULL DEFAULT ''
);

CREATE INDEX jobs_key ON jobs (key_id, created_at);
CREATE INDEX jobs_status ON jobs (status, created_at);
CREATE INDEX jobs_expires ON jobs (expires_at);
