package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Migrations are numbered SQL files, portable between SQLite and
// PostgreSQL, applied in order inside one transaction at start-up. A
// comment /*sqlite: ...*/ holds SQL for SQLite only (e.g. WITHOUT ROWID):
// PostgreSQL reads it as a comment, and migrate uncomments it for SQLite.
// SQL between /*postgres:*/ and /*:postgres*/ is for PostgreSQL only:
// migrate drops it for SQLite.
//
//go:embed migrations/*.sql
var migrations embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("store: migration %s: name must start with its number", base)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrate applies the pending migrations. Two instances starting at once
// are serialised by the dialect's lock, and the second one finds nothing
// left to do.
func (db *DB) migrate(ctx context.Context) error {
	return whileBusy(ctx, func() error { return db.migrateOnce(ctx) })
}

// whileBusy runs f until it is not refused as busy. On SQLite, a
// connection that opens a new file while another switches it to WAL is
// told "database is locked" at once, not after the busy handler's wait
// (about 1 start in 15 of four at once, in TestMigrationsConcurrentStart,
// for the main file and for the event log): that is tried again, for as
// long as the busy timeout would have waited.
func whileBusy(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(busyTimeout)
	for {
		err := f()
		var se sqlite3.Error
		if !errors.As(err, &se) || se.Code != sqlite3.ErrBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

func (db *DB) migrateOnce(ctx context.Context) error {
	all, err := loadMigrations()
	if err != nil {
		return err
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if db.dialect.lockMigrations != "" {
			if _, err := tx.ExecContext(ctx, db.dialect.lockMigrations); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
			return err
		}
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		if err := checkNotNewer(applied, all); err != nil {
			return err
		}
		for _, m := range all {
			if applied[m.version] || m.version > db.opt.MigrateTo {
				continue
			}
			if _, err := tx.ExecContext(ctx, db.dialect.migration(m.sql)); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),
				m.version, m.name, time.Now().UnixMilli()); err != nil {
				return err
			}
		}
		if db.dialect.name == "sqlite" {
			return db.migrateRiverTx(ctx, tx)
		}
		return nil
	})
	if err == nil && db.dialect.name != "sqlite" {
		err = db.migrateRiver(ctx)
	}
	if err != nil {
		return fmt.Errorf("store: migrate %s: %w", db.dialect.name, err)
	}
	return nil
}

// ErrSchemaTooNew is returned by Open when the database was migrated by a
// newer quire: running on it could corrupt data this binary does not know.
var ErrSchemaTooNew = errors.New("the database schema is newer than this binary")

// checkNotNewer refuses a schema with a migration this binary lacks.
func checkNotNewer(applied map[int]bool, known []migration) error {
	latest := known[len(known)-1].version
	newest := 0
	for v := range applied {
		newest = max(newest, v)
	}
	if newest > latest {
		return fmt.Errorf("%w: the database is at schema version %d, this binary knows versions up to %d; "+
			"run the quire release that migrated it (or a newer one), or restore a backup taken before the upgrade",
			ErrSchemaTooNew, newest, latest)
	}
	return nil
}

var (
	sqliteOnly   = regexp.MustCompile(`(?s)/\*sqlite:(.*?)\*/`) // over several lines too
	postgresOnly = regexp.MustCompile(`(?s)/\*postgres:\*/.*?/\*:postgres\*/`)
)

func (d dialect) migration(sql string) string {
	if d.name != "sqlite" {
		return sql
	}
	return sqliteOnly.ReplaceAllString(postgresOnly.ReplaceAllString(sql, ""), "$1")
}

func appliedVersions(ctx context.Context, tx *sql.Tx) (map[int]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	done := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		done[v] = true
	}
	return done, rows.Err()
}
