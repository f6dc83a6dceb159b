-- A submission counts its key's waiting jobs (QUIRE_JOB_MAX_QUEUED and
-- the queue's priority); this index makes that count read only them, not
-- every job the key has kept for QUIRE_JOB_RETENTION.
CREATE INDEX jobs_key_status ON jobs (key_id, status);
