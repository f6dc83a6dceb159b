package store

import (
	"context"
	"database/sql"
)

// Exclusive runs fn while no other instance sharing the database runs an
// Exclusive section: setting up what instances share outside the database
// (the signing key in a PKCS#11 token) must happen once. On SQLite the
// IMMEDIATE transaction takes the file's write lock; on PostgreSQL an
// advisory lock. fn must not use the database.
func (db *DB) Exclusive(ctx context.Context, fn func() error) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if !db.dialect.watermark { // PostgreSQL
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7261746367)`); err != nil { // any constant shared by all instances
				return err
			}
		}
		return fn()
	})
}
