package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/quire-dev/quire"
)

// CreateLicense stores a new license.
func (db *DB) CreateLicense(ctx context.Context, l quire.License) error {
	_, err := db.exec(ctx, `INSERT INTO licenses (key, id, organization, email, hosts, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		l.Key, l.ID, l.Organization, l.Email, strings.Join(l.Hosts, ","), ms(l.CreatedAt))
	return err
}

// Licenses lists every license, oldest first.
func (db *DB) Licenses(ctx context.Context) ([]quire.License, error) {
	var out []quire.License
	err := db.scan(ctx, `SELECT key, id, organization, email, hosts, created_at, revoked_at FROM licenses ORDER BY created_at, id`, nil,
		func(s scanner) error {
			var l quire.License
			var hosts string
			var created, revoked sql.NullInt64
			err := s.Scan(&l.Key, &l.ID, &l.Organization, &l.Email, &hosts, &created, &revoked)
			l.Hosts, l.CreatedAt, l.RevokedAt = splitHosts(hosts), fromMS(created), fromMS(revoked)
			out = append(out, l)
			return err
		})
	return out, err
}

// LicenseHosts returns the host lists of the licenses that have one, by
// license key.
func (db *DB) LicenseHosts(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	err := db.scan(ctx, `SELECT key, hosts FROM licenses WHERE hosts <> ''`, nil, func(s scanner) error {
		var key, hosts string
		err := s.Scan(&key, &hosts)
		out[key] = splitHosts(hosts)
		return err
	})
	return out, err
}

// SetLicenseHosts replaces the host list of the license with key; none
// clears it. quire.ErrNotFound when there is no such license.
func (db *DB) SetLicenseHosts(ctx context.Context, key string, hosts []string) error {
	res, err := db.exec(ctx, `UPDATE licenses SET hosts = ? WHERE key = ?`, strings.Join(hosts, ","), key)
	return affectedOne(res, err)
}

// RevokeLicense marks license id revoked at now; quire.ErrNotFound when
// there is none.
func (db *DB) RevokeLicense(ctx context.Context, id string, now time.Time) error {
	res, err := db.exec(ctx, `UPDATE licenses SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, now.UnixMilli(), id)
	return affectedOne(res, err)
}

// affectedOne turns an update of no row into quire.ErrNotFound.
func affectedOne(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return notFound(sql.ErrNoRows)
	}
	return nil
}

func splitHosts(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
