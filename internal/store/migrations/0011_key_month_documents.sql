-- The documents each key's answers processed per calendar month (UTC): what
-- the monthly quota counts. It grows in the transaction that counts an
-- answer in api_usage, and only when the quota allows it (a conditional
-- upsert of this one row), so that a quota holds exactly across instances
-- sharing the database.
CREATE TABLE key_month_documents (
	key_id TEXT NOT NULL,
	month BIGINT NOT NULL,
	documents BIGINT NOT NULL,
	PRIMARY KEY (key_id, month)
) /*sqlite: WITHOUT ROWID*/;

INSERT INTO key_month_documents (key_id, month, documents)
	SELECT key_id, month, SUM(documents) FROM api_usage GROUP BY key_id, month;
