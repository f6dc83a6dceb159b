package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/quire-dev/quire"
)

// SetKeyLimits stores the overrides of key l.KeyID, replacing earlier
// ones; quire.ErrNotFound when there is no such key.
func (db *DB) SetKeyLimits(ctx context.Context, l quire.KeyLimits) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var id string
		if err := tx.QueryRowContext(ctx, db.q(`SELECT id FROM api_keys WHERE id = ?`), l.KeyID).Scan(&id); err != nil {
			return notFound(err)
		}
		var per sql.NullInt64
		if l.Rate != nil {
			per = sql.NullInt64{Int64: l.RatePer.Milliseconds(), Valid: true}
		}
		_, err := tx.ExecContext(ctx, db.q(`INSERT INTO key_limits (key_id, max_concurrent, rate_n, rate_per_ms, quota, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (key_id) DO UPDATE SET max_concurrent = excluded.max_concurrent, rate_n = excluded.rate_n,
				rate_per_ms = excluded.rate_per_ms, quota = excluded.quota, updated_at = excluded.updated_at`),
			l.KeyID, nullable(l.Concurrent), nullable(l.Rate), per, nullable(l.Quota), l.UpdatedAt.UnixMilli())
		return err
	})
}

// ClearKeyLimits removes the overrides of key id: it has the defaults again.
func (db *DB) ClearKeyLimits(ctx context.Context, id string) error {
	_, err := db.exec(ctx, `DELETE FROM key_limits WHERE key_id = ?`, id)
	return err
}

// KeyLimits lists every key's overrides, by key id.
func (db *DB) KeyLimits(ctx context.Context) (map[string]quire.KeyLimits, error) {
	out := map[string]quire.KeyLimits{}
	err := db.scan(ctx, `SELECT key_id, max_concurrent, rate_n, rate_per_ms, quota, updated_at FROM key_limits`, nil, func(s scanner) error {
		var l quire.KeyLimits
		var conc, rate, per, quota sql.NullInt64
		var updated int64
		if err := s.Scan(&l.KeyID, &conc, &rate, &per, &quota, &updated); err != nil {
			return err
		}
		l.Concurrent, l.Rate, l.Quota = intOf(conc), intOf(rate), int64Of(quota)
		l.RatePer, l.UpdatedAt = time.Duration(per.Int64)*time.Millisecond, time.UnixMilli(updated).UTC()
		out[l.KeyID] = l
		return nil
	})
	return out, err
}

func nullable[T int | int64](v *T) sql.NullInt64 {
	if v == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(*v), Valid: true}
}

func intOf(v sql.NullInt64) *int {
	if !v.Valid {
		return nil
	}
	n := int(v.Int64)
	return &n
}

func int64Of(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}
