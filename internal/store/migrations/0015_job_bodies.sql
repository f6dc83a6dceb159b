-- The bodies of a job's request and of its answer, apart from its row
-- (issue 28). A job's row is written when it is submitted, started and
-- ended; with the bodies in it, each write copied them again (on SQLite
-- the whole record, overflow pages and all), which cost a job more CPU
-- than the rest of its bookkeeping. part is 'request' or 'result'.
CREATE TABLE job_bodies (
	job_id TEXT NOT NULL,
	part TEXT NOT NULL,
	body /*postgres:*/BYTEA/*:postgres*/ /*sqlite: BLOB*/ NOT NULL,
	PRIMARY KEY (job_id, part)
);
INSERT INTO job_bodies (job_id, part, body) SELECT id, 'request', request_body FROM jobs;
INSERT INTO job_bodies (job_id, part, body) SELECT id, 'result', result_body FROM jobs WHERE result_body IS NOT NULL;
ALTER TABLE jobs DROP COLUMN request_body;
ALTER TABLE jobs DROP COLUMN result_body;
