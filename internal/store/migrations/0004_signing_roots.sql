-- The root certificates of the signing identities of every instance that
-- used this database (public certificates, DER), so that a signature made
-- by one instance verifies as the service's on all of them.
CREATE TABLE signing_roots (
    fingerprint TEXT PRIMARY KEY, -- hex SHA-256 of der
    der         TEXT NOT NULL,    -- base64
    added_at    BIGINT NOT NULL
);
