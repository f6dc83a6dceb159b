-- The requests of keys with a monthly quota in progress (issue 46): each
-- holds one document of its key's quota from its admission until its
-- answer is counted (the row is deleted in the transaction that counts
-- it) or it ends uncounted. A row belongs to the lease of its instance
-- (job_leases), and counts only while that lease holds: the requests of
-- an instance that crashed stop holding the quota when its lease expires.
CREATE /*postgres:*/UNLOGGED/*:postgres*/ TABLE key_reservations (
	id TEXT PRIMARY KEY,
	key_id TEXT NOT NULL,
	month BIGINT NOT NULL,
	lease TEXT NOT NULL
);
CREATE INDEX key_reservations_key ON key_reservations (key_id, month);

/*postgres:*/
-- quire_reserve_quota takes one document of key p_key's quota p_quota in
-- month p_month for request p_id of lease p_lease, unless the month's
-- documents and the requests in progress under live leases use it all.
-- One call is one round trip; the transaction-scoped advisory lock
-- serialises the calls of one key, and each statement of a VOLATILE
-- function reads with a fresh snapshot, so it sees the rows of the call
-- that held the lock before it.
CREATE FUNCTION quire_reserve_quota(p_id TEXT, p_key TEXT, p_month BIGINT, p_lease TEXT, p_quota BIGINT)
RETURNS TABLE (documents BIGINT, held BIGINT, reserved BOOLEAN) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	PERFORM pg_advisory_xact_lock(hashtextextended('quire_quota:' || p_key, 0));
	SELECT COALESCE((SELECT d.documents FROM key_month_documents d WHERE d.key_id = p_key AND d.month = p_month), 0),
		(SELECT COUNT(*) FROM key_reservations r JOIN job_leases l ON l.id = r.lease
			WHERE r.key_id = p_key AND r.month = p_month
			AND l.expires_at >= CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT))
		INTO documents, held;
	reserved := documents + held < p_quota;
	IF reserved THEN
		INSERT INTO key_reservations (id, key_id, month, lease) VALUES (p_id, p_key, p_month, p_lease);
	END IF;
	RETURN NEXT;
END
$$;
/*:postgres*/
