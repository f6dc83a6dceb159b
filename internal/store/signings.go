package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/quire-dev/quire"
)

// RecordSigning stores the record of a signature. A signature recorded
// already (two identical requests in the same second sign the same bytes)
// keeps its first record.
func (db *DB) RecordSigning(ctx context.Context, s quire.Signing) error {
	return db.inTx(ctx, func(tx *sql.Tx) error { return db.insertSigning(ctx, tx, s) })
}

func (db *DB) insertSigning(ctx context.Context, tx *sql.Tx, s quire.Signing) error {
	events := s.AuditTrail
	if events == nil {
		events = []quire.AuditEvent{} // [], as the column's default
	}
	trail, err := json.Marshal(events)
	if err != nil {
		return fmt.Errorf("store: audit trail of event %s: %w", s.EventID, err)
	}
	_, err = tx.ExecContext(ctx, db.q(`INSERT INTO signings (signed_digest, event_id, input_sha256, output_sha256, signer_email, api_key_id, signed_at, audit_trail)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (signed_digest) DO NOTHING`), s.SignedDigest, s.EventID, s.InputSHA256, s.OutputSHA256, s.SignerEmail, s.APIKeyID, ms(s.SignedAt), string(trail))
	return err
}

// SigningByDigest returns the signing whose signature covers bytes with
// the given SHA-256; quire.ErrNotFound when quire made no such signature.
func (db *DB) SigningByDigest(ctx context.Context, digest string) (quire.Signing, error) {
	var s quire.Signing
	var at sql.NullInt64
	var trail string
	err := db.queryRow(ctx, `SELECT signed_digest, event_id, input_sha256, output_sha256, signer_email, api_key_id, signed_at, audit_trail
		FROM signings WHERE signed_digest = ?`, digest).Scan(&s.SignedDigest, &s.EventID, &s.InputSHA256, &s.OutputSHA256,
		&s.SignerEmail, &s.APIKeyID, &at, &trail)
	if err != nil {
		return s, notFound(err)
	}
	s.SignedAt = fromMS(at)
	if err := json.Unmarshal([]byte(trail), &s.AuditTrail); err != nil {
		return s, fmt.Errorf("store: audit trail of signing %s: %w", digest, err)
	}
	return s, nil
}

// AddSigningRoot records the root certificate (DER) of an instance's
// signing identity; recording it again changes nothing.
func (db *DB) AddSigningRoot(ctx context.Context, der []byte, now time.Time) error {
	return db.addRoot(ctx, "signing_roots", der, now)
}

// SigningRoots returns every recorded root certificate (DER).
func (db *DB) SigningRoots(ctx context.Context) ([][]byte, error) {
	return db.roots(ctx, "signing_roots")
}

// AddTSARoot records the certificate (DER) at the top of the chain of a
// configured time-stamp authority; recording it again changes nothing.
func (db *DB) AddTSARoot(ctx context.Context, der []byte, now time.Time) error {
	return db.addRoot(ctx, "tsa_roots", der, now)
}

// TSARoots returns every recorded time-stamp authority root (DER).
func (db *DB) TSARoots(ctx context.Context) ([][]byte, error) { return db.roots(ctx, "tsa_roots") }

// addRoot records a certificate in table (signing_roots or tsa_roots).
func (db *DB) addRoot(ctx context.Context, table string, der []byte, now time.Time) error {
	sum := sha256.Sum256(der)
	_, err := db.exec(ctx, `INSERT INTO `+table+` (fingerprint, der, added_at) VALUES (?, ?, ?) ON CONFLICT (fingerprint) DO NOTHING`,
		hex.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(der), now.UnixMilli())
	return err
}

// roots returns the certificates of table, oldest first.
func (db *DB) roots(ctx context.Context, table string) ([][]byte, error) {
	var out [][]byte
	err := db.scan(ctx, `SELECT der FROM `+table+` ORDER BY added_at, fingerprint`, nil, func(s scanner) error {
		var text string
		if err := s.Scan(&text); err != nil {
			return err
		}
		der, err := base64.StdEncoding.DecodeString(text)
		out = append(out, der)
		return err
	})
	return out, err
}
