-- One row per signature quire applied; never any document content.
-- signed_digest is the SHA-256 over the signature's byte ranges (the CMS
-- message digest): it still identifies the signature after later
-- incremental updates change the file's own hash.
CREATE TABLE signings (
    signed_digest TEXT PRIMARY KEY,
    event_id      TEXT NOT NULL,
    input_sha256  TEXT NOT NULL,
    output_sha256 TEXT NOT NULL,
    signer_email  TEXT NOT NULL,
    api_key_id    TEXT NOT NULL,
    signed_at     BIGINT NOT NULL
);
CREATE INDEX signings_event ON signings (event_id);
