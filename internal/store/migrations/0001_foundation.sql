-- Settings of the installation, such as the check value of the server secret.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- API keys: only the SHA-256 of each key is kept, never the key.
CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    email        TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX api_keys_email ON api_keys (email);

-- One pending one-time code per e-mail address; a new one replaces it.
-- hash is an HMAC of the code under the server secret.
CREATE TABLE login_codes (
    email      TEXT PRIMARY KEY,
    hash       TEXT NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

-- Fixed-window request counters shared by every instance. bucket holds a
-- keyed hash of what is limited (an address, an e-mail), never the value.
CREATE TABLE rate_limits (
    bucket       TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    hits         INTEGER NOT NULL
);
