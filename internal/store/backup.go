package store

import (
	"context"
	"errors"
	"fmt"
)

// ErrNotSQLite is returned by Snapshot on PostgreSQL, whose own tools
// (pg_dump) make its backups.
var ErrNotSQLite = errors.New("store: only a SQLite database can be copied by quire; back up PostgreSQL with pg_dump")

// Snapshot writes a consistent copy of the SQLite database to path, and
// of its event log to EventLogPath(path), which must not exist, while the
// service keeps writing: VACUUM INTO reads in one transaction, and the
// copy is compact and needs no WAL file. The main file is copied first:
// the log copied after it holds every event its watermark has yet to
// count.
func (db *DB) Snapshot(ctx context.Context, path string) error {
	if db.dialect.name != "sqlite" {
		return ErrNotSQLite
	}
	if _, err := db.sql.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return fmt.Errorf("store: snapshot to %s: %w", path, err)
	}
	if db.log == nil {
		return nil
	}
	return db.log.Snapshot(ctx, EventLogPath(path))
}

// SchemaVersion is the newest migration applied to the database.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := db.sql.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}
