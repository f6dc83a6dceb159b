-- PostgreSQL tries to compress every value over 2 KB before storing it
-- out of line (pglz). A job's bodies are office files, PDFs and images,
-- compressed already: the attempt fails and costs the database server's
-- CPU on every submission and every answer stored (pglz_compress was the
-- server's busiest function over bench jobs, about 15% of its CPU).
-- EXTERNAL stores them out of line as they are. SQLite never compresses.
/*postgres:*/ALTER TABLE job_bodies ALTER COLUMN body SET STORAGE EXTERNAL;/*:postgres*/
