package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/quire-dev/quire"
)

// CreateLicense stores a new license.
func (db *DB) CreateLicense(ctx context.Context, l quire.License) error {
	_, err := db.exec(ctx, `INSERT INTO licenses (key, id, organization, email, created_at) VALUES (?, ?, ?, ?, ?)`,
		l.Key, l.ID, l.Organization, l.Email, ms(l.CreatedAt))
	return err
}

// Licenses lists every license, oldest first.
func (db *DB) Licenses(ctx context.Context) ([]quire.License, error) {
	var out []quire.License
	err := db.scan(ctx, `SELECT key, id, organization, email, created_at, revoked_at FROM licenses ORDER BY created_at, id`, nil,
		func(s scanner) error {
			var l quire.License
			var created, revoked sql.NullInt64
			err := s.Scan(&l.Key, &l.ID, &l.Organization, &l.Email, &created, &revoked)
			l.CreatedAt, l.RevokedAt = fromMS(created), fromMS(revoked)
			out = append(out, l)
			return err
		})
	return out, err
}

// RevokeLicense marks license id revoked at now; quire.ErrNotFound when
// there is none.
func (db *DB) RevokeLicense(ctx context.Context, id string, now time.Time) error {
	res, err := db.exec(ctx, `UPDATE licenses SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, now.UnixMilli(), id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return notFound(sql.ErrNoRows)
	}
	return nil
}
