-- Leases of the instances that run jobs (issue 44). An instance renews
-- its row every few seconds; the jobs that River's rows show running
-- under a lease that has expired are made available again by any other
-- instance. expires_at is in milliseconds of the database's clock
-- (PostgreSQL), so that the instances' clocks do not matter. SQLite has
-- one instance, which makes every running job available again when it
-- starts: it keeps no lease.
CREATE TABLE job_leases (
	id TEXT PRIMARY KEY,
	expires_at BIGINT NOT NULL
);

-- The run that holds a job: the lease of the instance that started it
-- (empty on SQLite). With runs, it names the run, so that only the run
-- that holds the job stores its answer.
ALTER TABLE jobs ADD COLUMN lease TEXT NOT NULL DEFAULT '';
