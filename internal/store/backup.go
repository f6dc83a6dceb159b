package store

import (
	"context"
	"errors"
	"fmt"
)

// ErrNotSQLite is returned by Snapshot on PostgreSQL, whose own tools
// (pg_dump) make its backups.
var ErrNotSQLite = errors.New("store: only a SQLite database can be copied by quire; back up PostgreSQL with pg_dump")

// Snapshot writes a consistent copy of the SQLite database to path, which
// must not exist, while the service keeps writing: VACUUM INTO reads in
// one transaction, and the copy is compact and needs no WAL file.
func (db *DB) Snapshot(ctx context.Context, path string) error {
	if db.dialect.name != "sqlite" {
		return ErrNotSQLite
	}
	if _, err := db.sql.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return fmt.Errorf("store: snapshot to %s: %w", path, err)
	}
	return nil
}

// SchemaVersion is the newest migration applied to the database.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := db.sql.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}
