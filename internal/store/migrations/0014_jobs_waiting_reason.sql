-- A job that a limit or a full engine sent back to wait (429, 503) is
-- queued again, with the message of that answer as why it waits, until
-- it runs; empty otherwise.
ALTER TABLE jobs ADD COLUMN waiting TEXT NOT NULL DEFAULT '';
