package store

import (
	"context"
	"database/sql"

	"github.com/quire-dev/quire"
)

// RecordSigning stores the record of a signature.
func (db *DB) RecordSigning(ctx context.Context, s quire.Signing) error {
	_, err := db.exec(ctx, `INSERT INTO signings (signed_digest, event_id, input_sha256, output_sha256, signer_email, api_key_id, signed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, s.SignedDigest, s.EventID, s.InputSHA256, s.OutputSHA256, s.SignerEmail, s.APIKeyID, ms(s.SignedAt))
	return err
}

// SigningByDigest returns the signing whose signature covers bytes with
// the given SHA-256; quire.ErrNotFound when quire made no such signature.
func (db *DB) SigningByDigest(ctx context.Context, digest string) (quire.Signing, error) {
	var s quire.Signing
	var at sql.NullInt64
	err := db.queryRow(ctx, `SELECT signed_digest, event_id, input_sha256, output_sha256, signer_email, api_key_id, signed_at
		FROM signings WHERE signed_digest = ?`, digest).Scan(&s.SignedDigest, &s.EventID, &s.InputSHA256, &s.OutputSHA256,
		&s.SignerEmail, &s.APIKeyID, &at)
	s.SignedAt = fromMS(at)
	return s, notFound(err)
}
