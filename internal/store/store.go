// Package store keeps quire's records in SQLite (the embedded default) or
// PostgreSQL (for several instances behind a load balancer).
//
// One implementation serves both: the SQL is portable (times are stored as
// Unix milliseconds, identifiers as text) and a small dialect value holds
// the few differences (driver, placeholders, how migrations are locked).
// The contract tests in this package run every behaviour against both.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "github.com/mattn/go-sqlite3"    // registers the "sqlite3" driver
	"github.com/quire-dev/quire"
)

// DB is an open database with quire's schema applied.
type DB struct {
	sql     *sql.DB
	dialect dialect
	stmts   sync.Map // statement text -> *sql.Stmt, see prepared
	// writes queues this process's busiest writes on SQLite (jobs and
	// usage counts) in Go rather than in SQLite's busy handler, whose
	// sleeps (up to 100 ms, no order) gave submissions waits of seconds
	// under load (see writeTurn).
	writes sync.Mutex
	// SQLite only (see eventlog.go): the file's path, the event log, and
	// the fold's pool, which sees both files.
	path string
	log  *DB
	fold *sql.DB
	// holds is the pool of the holds on quotas (quota.go), which need not
	// survive a power loss: SQLite's without an fsync per commit, the
	// main pool on PostgreSQL (their table is UNLOGGED).
	holds *sql.DB

	opt Options
}

// Options are the bounds of a database that tests set smaller; the zero
// value is the service's.
type Options struct {
	// MigrateTo is the newest migration applied: 0 applies all of them;
	// a test of a migration opens a database of an earlier release.
	MigrateTo int
	// CountChunk is the most opens that one transaction of CountPending
	// counts, so that a backlog (say, after counting failed for a while)
	// is worked off in transactions of bounded length, each committed,
	// rather than in one that could outlast its time limit every time.
	// 0: 50000.
	CountChunk int
}

type dialect struct {
	name string // "sqlite" or "postgres"
	// lockMigrations serialises schema changes between processes starting at
	// once. SQLite needs none: every transaction begins IMMEDIATE (see dsn),
	// which already takes the database's single write lock.
	lockMigrations string
	dollar         bool   // placeholders are $1, $2 ... instead of ?
	multiRow       bool   // batch inserts as multi-row statements (see insertRows)
	greatest       string // the two-argument maximum and minimum functions
	least          string
	nowMS          string // the database's clock, in milliseconds since 1970
	// watermark: the events table has ids that follow the order of the
	// commits (SQLite: one writer at a time), so the oldest events can be
	// taken in bounded chunks without an index, and those not yet counted
	// are those after a watermark. PostgreSQL has no such order: other
	// instances commit in between, in any order of their ids.
	watermark bool
}

var (
	sqlite   = dialect{name: "sqlite", greatest: "max", least: "min", nowMS: "CAST(unixepoch('subsec') * 1000 AS INTEGER)", watermark: true}
	postgres = dialect{name: "postgres", dollar: true, multiRow: true, greatest: "GREATEST", least: "LEAST",
		nowMS:          "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
		lockMigrations: "SELECT pg_advisory_xact_lock(7261746365)"} // any constant shared by all instances
)

// Open connects to the database named by rawURL and applies pending
// migrations. An empty rawURL opens (creating it if needed) quire.db in
// dataDir; "postgres://..." or "postgresql://..." opens PostgreSQL;
// "sqlite:PATH" opens the SQLite file at PATH.
func Open(ctx context.Context, rawURL, dataDir string) (*DB, error) {
	return OpenWith(ctx, rawURL, dataDir, Options{})
}

// OpenWith is Open with the bounds of o.
func OpenWith(ctx context.Context, rawURL, dataDir string, o Options) (*DB, error) {
	if o.MigrateTo == 0 {
		o.MigrateTo = math.MaxInt
	}
	if o.CountChunk == 0 {
		o.CountChunk = 50000
	}
	db, err := open(rawURL, dataDir)
	if err != nil {
		return nil, err
	}
	db.opt = o
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if db.dialect.watermark {
		if err := db.openEventLog(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

func open(rawURL, dataDir string) (*DB, error) {
	switch {
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		conn, err := sql.Open("pgx", rawURL)
		if err != nil {
			return nil, fmt.Errorf("store: open postgres: %w", err)
		}
		conn.SetMaxOpenConns(16)
		conn.SetMaxIdleConns(16)
		conn.SetConnMaxIdleTime(5 * time.Minute)
		return &DB{sql: conn, dialect: postgres, holds: conn}, nil
	case rawURL == "" || strings.HasPrefix(rawURL, "sqlite:"):
		path := strings.TrimPrefix(rawURL, "sqlite:")
		if path == "" {
			if err := os.MkdirAll(dataDir, 0o700); err != nil {
				return nil, fmt.Errorf("store: create data dir: %w", err)
			}
			path = filepath.Join(dataDir, "quire.db")
		}
		if err := private(path); err != nil {
			return nil, err
		}
		conn, err := sql.Open("sqlite3", sqliteDSN(path, "immediate", "FULL"))
		if err != nil {
			return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
		}
		conn.SetMaxIdleConns(32)
		holds, err := sql.Open("sqlite3", sqliteDSN(path, "immediate", "NORMAL"))
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
		}
		holds.SetMaxIdleConns(4)
		return &DB{sql: conn, dialect: sqlite, path: path, holds: holds}, nil
	default:
		return nil, fmt.Errorf("store: QUIRE_DATABASE_URL: unsupported form (scheme %q): want postgres://... or sqlite:PATH", scheme(rawURL))
	}
}

// private creates the SQLite file at path readable by its owner only, or
// takes group and other permissions off an existing one and its journals:
// it holds license keys and usage. SQLite gives the -wal and -shm files it
// creates the permissions of the database file.
func private(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil && fi.Mode().Perm()&0o077 != 0 {
			err = os.Chmod(p, fi.Mode().Perm()&0o700)
		}
		if err != nil {
			return fmt.Errorf("store: restrict %s to its owner: %w", p, err)
		}
	}
	return nil
}

// busyTimeout is how long a SQLite statement waits for another
// connection's lock before "database is locked".
const busyTimeout = 10 * time.Second

// sqliteDSN asks for WAL (readers never block the writer), synchronous
// as said: FULL, an fsync on commit (an acknowledged write survives power
// loss), or NORMAL, none (a power loss may undo the last), a generous busy
// timeout (several processes may share the file: serve and the CLI), and
// transactions that begin as txlock says: IMMEDIATE, so that a writer
// never fails half-way on a lock upgrade, except for the fold's (see
// eventlog.go).
func sqliteDSN(path, txlock, synchronous string) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", synchronous)
	q.Set("_busy_timeout", strconv.Itoa(int(busyTimeout.Milliseconds())))
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", txlock)
	q.Set("_stmt_cache_size", "64")
	return "file:" + path + "?" + q.Encode()
}

// scheme names the scheme of a database URL, and nothing else of it: the
// rest may hold a password in forms url.Redacted does not recognise.
func scheme(raw string) string {
	if i := strings.Index(raw, "://"); i > 0 && i < 16 {
		return raw[:i]
	}
	return ""
}

// Backend names the database in use: "sqlite" or "postgres".
func (db *DB) Backend() string { return db.dialect.name }

// Close closes the prepared statements and the connection pools.
func (db *DB) Close() error {
	db.stmts.Range(func(_, s any) bool { s.(*sql.Stmt).Close(); return true })
	err := db.sql.Close()
	if db.holds != nil && db.holds != db.sql {
		err = errors.Join(err, db.holds.Close())
	}
	if db.fold != nil {
		err = errors.Join(err, db.fold.Close())
	}
	if db.log != nil {
		err = errors.Join(err, db.log.Close())
	}
	return err
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.sql.PingContext(ctx) }

// q rewrites the ? placeholders of a portable statement for the dialect.
func (db *DB) q(query string) string {
	if !db.dialect.dollar {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (db *DB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	stmt, err := db.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return stmt.ExecContext(ctx, args...)
}

func (db *DB) queryRow(ctx context.Context, query string, args ...any) scanner {
	stmt, err := db.stmt(ctx, query)
	if err != nil {
		return failedRow{err}
	}
	return stmt.QueryRowContext(ctx, args...)
}

type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }

// stmt returns the prepared statement of a constant portable query (the
// cache is never emptied, so never pass SQL built from data), prepared once
// per connection and kept: the SQLite driver would otherwise parse the SQL
// again on every call, which costs more than running it.
func (db *DB) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := db.stmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := db.sql.PrepareContext(ctx, db.q(query))
	if err != nil {
		return nil, err
	}
	if old, loaded := db.stmts.LoadOrStore(query, s); loaded {
		s.Close()
		return old.(*sql.Stmt), nil
	}
	return s, nil
}

// prepared is stmt within tx.
func (db *DB) prepared(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	s, err := db.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, s), nil
}

// execTx and queryRowTx run a constant portable query in tx, prepared
// once (prepared).
func (db *DB) execTx(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
	stmt, err := db.prepared(ctx, tx, query)
	if err == nil {
		_, err = stmt.ExecContext(ctx, args...)
	}
	return err
}

func (db *DB) queryRowTx(ctx context.Context, tx *sql.Tx, query string, args ...any) scanner {
	stmt, err := db.prepared(ctx, tx, query)
	if err != nil {
		return failedRow{err}
	}
	return stmt.QueryRowContext(ctx, args...)
}

// inTx runs fn in a transaction, committing when it returns nil.
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return transact(ctx, db.sql, fn)
}

// transact runs fn in a transaction of pool, committing when it returns nil.
func transact(ctx context.Context, pool *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// ms stores a time as Unix milliseconds; the zero time is stored as NULL.
func ms(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return quire.ErrNotFound
	}
	return err
}

// writeTurn takes this process's turn for a write transaction on SQLite,
// which has one writer at a time; PostgreSQL needs none (rows are
// locked, not the database). Call it before the transaction begins.
func (db *DB) writeTurn() func() {
	if db.dialect.name != "sqlite" {
		return func() {}
	}
	db.writes.Lock()
	return db.writes.Unlock
}
