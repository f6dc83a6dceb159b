package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/quire-dev/quire"
)

// PutCode stores a one-time code for c.Email, replacing any earlier one
// and its attempt count.
func (db *DB) PutCode(ctx context.Context, c quire.LoginCode) error {
	_, err := db.exec(ctx, `INSERT INTO login_codes (email, hash, attempts, expires_at, created_at) VALUES (?, ?, 0, ?, ?)
		ON CONFLICT (email) DO UPDATE SET hash = excluded.hash, attempts = 0,
			expires_at = excluded.expires_at, created_at = excluded.created_at`,
		c.Email, c.Hash, ms(c.ExpiresAt), ms(c.CreatedAt))
	return err
}

// AttemptCode counts one verification attempt against the live code of
// email and returns its hash. It returns quire.ErrNotFound when there is
// no code, it has expired, or it already had maxAttempts attempts. The
// count and the check are one statement, so concurrent attempts on several
// instances cannot exceed maxAttempts between them.
func (db *DB) AttemptCode(ctx context.Context, email string, now time.Time, maxAttempts int) (hash string, err error) {
	err = db.queryRow(ctx, `UPDATE login_codes SET attempts = attempts + 1
		WHERE email = ? AND expires_at > ? AND attempts < ? RETURNING hash`,
		email, now.UnixMilli(), maxAttempts).Scan(&hash)
	return hash, notFound(err)
}

// RedeemCode consumes the code of email with the given hash and stores key,
// in one transaction: a code yields at most one key, even when two
// requests race. It returns quire.ErrNotFound when the code is gone.
func (db *DB) RedeemCode(ctx context.Context, email, hash string, key quire.APIKey) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, db.q(`DELETE FROM login_codes WHERE email = ? AND hash = ?`), email, hash)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return notFound(sql.ErrNoRows)
		}
		return insertKey(ctx, db, tx, key)
	})
}

// DeleteExpiredCodes removes codes that expired before now.
func (db *DB) DeleteExpiredCodes(ctx context.Context, now time.Time) (int64, error) {
	res, err := db.exec(ctx, `DELETE FROM login_codes WHERE expires_at <= ?`, now.UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// CreateKey stores a new API key record.
func (db *DB) CreateKey(ctx context.Context, key quire.APIKey) error {
	return db.inTx(ctx, func(tx *sql.Tx) error { return insertKey(ctx, db, tx, key) })
}

func insertKey(ctx context.Context, db *DB, tx *sql.Tx, k quire.APIKey) error {
	_, err := tx.ExecContext(ctx, db.q(`INSERT INTO api_keys (id, email, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)`),
		k.ID, k.Email, k.Prefix, k.Hash, ms(k.CreatedAt))
	return err
}

const keyColumns = `id, email, prefix, hash, created_at, last_used_at, revoked_at`

func scanKey(row scanner) (quire.APIKey, error) {
	var k quire.APIKey
	var created, used, revoked sql.NullInt64
	if err := row.Scan(&k.ID, &k.Email, &k.Prefix, &k.Hash, &created, &used, &revoked); err != nil {
		return k, notFound(err)
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = fromMS(created), fromMS(used), fromMS(revoked)
	return k, nil
}

// KeyByHash returns the key whose SHA-256 is hash, revoked or not.
func (db *DB) KeyByHash(ctx context.Context, hash string) (quire.APIKey, error) {
	return scanKey(db.queryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = ?`, hash))
}

// KeyByID returns key id, revoked or not.
func (db *DB) KeyByID(ctx context.Context, id string) (quire.APIKey, error) {
	return scanKey(db.queryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
}

// Keys lists every key, oldest first.
func (db *DB) Keys(ctx context.Context) ([]quire.APIKey, error) {
	var out []quire.APIKey
	err := db.scan(ctx, `SELECT `+keyColumns+` FROM api_keys ORDER BY created_at, id`, nil, func(s scanner) error {
		k, err := scanKey(s)
		out = append(out, k)
		return err
	})
	return out, err
}

// TouchKey records that key id was used at now. To keep authentication
// from writing on every request, it only writes when the recorded time is
// older than now - every.
func (db *DB) TouchKey(ctx context.Context, id string, now time.Time, every time.Duration) error {
	_, err := db.exec(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
		now.UnixMilli(), id, now.Add(-every).UnixMilli())
	return err
}

// RevokeKey marks key id revoked at now. Revoking twice keeps the first
// time. It returns quire.ErrNotFound for an unknown id.
func (db *DB) RevokeKey(ctx context.Context, id string, now time.Time) error {
	res, err := db.exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, now.UnixMilli(), id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return notFound(sql.ErrNoRows)
	}
	return nil
}
