-- The certificates at the top of the chains of the time-stamp authorities
-- of QUIRE_TSA_URL, as their tokens carried them (public certificates,
-- DER), so that /v1/verify on every instance relies on the time-stamps of
-- the authorities the service was configured with, and on no other
-- unless QUIRE_TRUST_TSA names it.
CREATE TABLE tsa_roots (
    fingerprint TEXT PRIMARY KEY, -- hex SHA-256 of der
    der         TEXT NOT NULL,    -- base64
    added_at    BIGINT NOT NULL
);
