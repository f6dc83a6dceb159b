-- The requests in progress of keys with a limit of requests at once
-- (QUIRE_KEY_MAX_CONCURRENT, issue 46): each is a row from its admission
-- until it ends. As the holds on quotas (0019), a row belongs to the lease
-- of its instance (job_leases) and counts only while that lease holds, so
-- that the requests of an instance that crashed stop counting when its
-- lease expires. The instances sharing a PostgreSQL database write them;
-- SQLite, whose database one instance serves, counts its requests in
-- memory, and its table stays empty.
CREATE /*postgres:*/UNLOGGED/*:postgres*/ TABLE key_requests (
	id TEXT PRIMARY KEY,
	key_id TEXT NOT NULL,
	lease TEXT NOT NULL
);
CREATE INDEX key_requests_key ON key_requests (key_id);

/*postgres:*/
-- quire_hold_request admits request p_id of lease p_lease for key p_key:
-- when p_concurrent > 0, as one of its p_concurrent requests in progress
-- at once (a row of key_requests), and when p_quota > 0, as the holder of
-- one document of its quota p_quota in month p_month (a row of
-- key_reservations); both, or neither when the key's requests in progress
-- or its month's documents and holds under live leases reach a limit.
-- One call is one round trip whatever the limits. It takes the advisory
-- lock of quire_reserve_quota, which instances of the version before run
-- during an upgrade: the calls of one key are serialised by both, and each
-- statement of a VOLATILE function reads with a fresh snapshot, so it sees
-- the rows of the call that held the lock before it.
CREATE FUNCTION quire_hold_request(p_id TEXT, p_key TEXT, p_lease TEXT, p_concurrent BIGINT, p_month BIGINT, p_quota BIGINT)
RETURNS TABLE (running BIGINT, documents BIGINT, held BIGINT, taken BOOLEAN) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	now_ms BIGINT;
BEGIN
	PERFORM pg_advisory_xact_lock(hashtextextended('quire_quota:' || p_key, 0));
	now_ms := CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT);
	running := 0;
	documents := 0;
	held := 0;
	IF p_concurrent > 0 THEN
		SELECT COUNT(*) INTO running FROM key_requests r JOIN job_leases l ON l.id = r.lease
			WHERE r.key_id = p_key AND l.expires_at >= now_ms;
	END IF;
	IF p_quota > 0 THEN
		SELECT COALESCE((SELECT d.documents FROM key_month_documents d WHERE d.key_id = p_key AND d.month = p_month), 0),
			(SELECT COUNT(*) FROM key_reservations r JOIN job_leases l ON l.id = r.lease
				WHERE r.key_id = p_key AND r.month = p_month AND l.expires_at >= now_ms)
			INTO documents, held;
	END IF;
	taken := (p_concurrent <= 0 OR running < p_concurrent) AND (p_quota <= 0 OR documents + held < p_quota);
	IF taken AND p_concurrent > 0 THEN
		INSERT INTO key_requests (id, key_id, lease) VALUES (p_id, p_key, p_lease);
	END IF;
	IF taken AND p_quota > 0 THEN
		INSERT INTO key_reservations (id, key_id, month, lease) VALUES (p_id, p_key, p_month, p_lease);
	END IF;
	RETURN NEXT;
END
$$;
/*:postgres*/
