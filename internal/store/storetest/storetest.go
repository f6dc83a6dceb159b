// Package storetest opens real databases for tests: a SQLite file in a
// temporary directory, and a fresh schema in the PostgreSQL server named
// by QUIRE_TEST_DATABASE_URL (default: the local server of the developer
// machine and of CI). Every package whose behaviour depends on storage runs
// its tests on both through ForEach.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/mattn/go-sqlite3"

	"github.com/quire-dev/quire/internal/store"
)

// DefaultPostgresURL is the server that developers' machines and CI run.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Backends are the names ForEach runs under.
var Backends = []string{"sqlite", "postgres"}

// ForEach runs fn as a subtest once per backend, each with a new, empty,
// migrated database.
func ForEach(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	for _, b := range Backends {
		t.Run(b, func(t *testing.T) {
			fn(t, Open(t, URL(t, b)))
		})
	}
}

// Open opens and migrates the database at rawURL, closed at cleanup.
func Open(t testing.TB, rawURL string) *store.DB {
	t.Helper()
	return OpenWith(t, rawURL, store.Options{})
}

// OpenWith is Open with the bounds of o.
func OpenWith(t testing.TB, rawURL string, o store.Options) *store.DB {
	t.Helper()
	db, err := store.OpenWith(context.Background(), rawURL, t.TempDir(), o)
	if err != nil {
		t.Fatalf("open %s: %v", rawURL, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// URL returns the address of a new, empty database of the backend:
// "sqlite:FILE" in a temporary directory, or the PostgreSQL server with
// search_path set to a new schema that is dropped at cleanup.
//
// When PostgreSQL cannot be reached the test is skipped with a message
// saying what to run, except under CI (CI set), where it fails: a CI run
// must never pass without having tested PostgreSQL.
func URL(t testing.TB, backend string) string {
	t.Helper()
	if backend == "sqlite" {
		return "sqlite:" + t.TempDir() + "/quire.db"
	}
	base := os.Getenv("QUIRE_TEST_DATABASE_URL")
	if base == "" {
		base = DefaultPostgresURL
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("QUIRE_TEST_DATABASE_URL: %v", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		msg := "PostgreSQL not reachable at " + redacted(base) + ": " + err.Error() +
			" (start it, e.g. `pg_ctlcluster 15 main start`, or set QUIRE_TEST_DATABASE_URL)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	schema := "quire_test_" + randomHex(6)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		c, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer c.Close()
		c.Exec("DROP SCHEMA " + schema + " CASCADE")
	})
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func redacted(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(unparsable URL)"
}

// SQL opens a plain connection to the database at rawURL (as given by URL),
// for tests that inspect rows or hold locks behind the store's back.
func SQL(t testing.TB, rawURL string) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", rawURL
	if path, ok := strings.CutPrefix(rawURL, "sqlite:"); ok {
		driver, dsn = "sqlite3", "file:"+path+"?_busy_timeout=10000"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if path, ok := strings.CutPrefix(rawURL, "sqlite:"); ok {
		attachEventLog(t, db, path)
	}
	return db
}

// attachEventLog attaches the event log of the SQLite file at path, when
// it has one, to db's one connection: the raw events are then read as
// telemetry_events, as they are on PostgreSQL.
func attachEventLog(t testing.TB, db *sql.DB, path string) {
	t.Helper()
	log := store.EventLogPath(path)
	if _, err := os.Stat(log); errors.Is(err, fs.ErrNotExist) {
		return
	}
	db.SetMaxOpenConns(1) // ATTACH holds for one connection
	if _, err := db.Exec(`ATTACH DATABASE ? AS log`, log); err != nil {
		t.Fatal(err)
	}
}

// CPUTime is the CPU time this process has used so far, for benchmarks
// over the backends: the machine may be shared, so a benchmark's wall
// time says less than its CPU time. (For PostgreSQL it leaves out the
// server's own.)
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
