package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

var ctx = context.Background()

// openAt opens the database at u with its migrations up to version only:
// a database of an earlier release, for a migration's test.
func openAt(t *testing.T, u string, version int) *store.DB {
	return storetest.OpenWith(t, u, store.Options{MigrateTo: version})
}

func TestMigrationsConcurrentStart(t *testing.T) {
	for _, b := range storetest.Backends {
		t.Run(b, func(t *testing.T) {
			u := storetest.URL(t, b)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					db, err := store.Open(ctx, u, t.TempDir())
					if err == nil {
						err = db.Close()
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("instance %d: %v", i, err)
				}
			}
			db := storetest.Open(t, u) // and once more on the migrated schema
			if err := db.Ping(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSQLiteFilesAreTheOwners: quire.db and its journals hold license
// keys and usage, so only quire's user may read them, also when an older
// quire left them readable to all.
func TestSQLiteFilesAreTheOwners(t *testing.T) {
	defer syscall.Umask(syscall.Umask(0o022))
	dir := t.TempDir()
	check := func(when string) {
		db, err := store.Open(ctx, "", dir)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.EnsureSetting(ctx, "k", "v"); err != nil { // writes, so that -wal and -shm exist
			t.Fatal(err)
		}
		if err := db.RecordOpens(ctx, []quire.OpenEvent{{LicenseKey: "k", DocumentID: "D", ReceivedAt: time.Now(), Metadata: "{}"}}); err != nil {
			t.Fatal(err)
		}
		for _, name := range sqliteFiles {
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s is %v (%v), want -rw-------", when, name, fi.Mode().Perm(), err)
			}
		}
	}
	check("new database")
	for _, name := range sqliteFiles {
		if err := os.Chmod(filepath.Join(dir, name), 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	check("database left readable to all")
}

var sqliteFiles = []string{"quire.db", "quire.db-wal", "quire.db-shm", "quire-events.db", "quire-events.db-wal", "quire-events.db-shm"}

// TestSQLiteCommitsDurably: a 204 means on disk, so every connection, to
// the main file and to the event log, runs in WAL mode with a full fsync
// at each commit.
func TestSQLiteCommitsDurably(t *testing.T) {
	db := storetest.Open(t, storetest.URL(t, "sqlite"))
	for name, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "foreign_keys": "1", "busy_timeout": "10000"} {
		if v, err := db.Pragmas(name); err != nil || v[0] != want || v[1] != want {
			t.Errorf("PRAGMA %s = %q (%v), want %q in both files", name, v, err, want)
		}
	}
}

func TestOpenRejectsUnknownURL(t *testing.T) {
	for _, u := range []string{"mysql://u:secretpw@h/db", "host=db user=q password=secretpw", "x:/y?password=secretpw"} {
		_, err := store.Open(ctx, u, t.TempDir())
		if err == nil {
			t.Fatalf("want an error for %s", u)
		}
		if got := err.Error(); strings.Contains(got, "secretpw") || !strings.Contains(got, "QUIRE_DATABASE_URL") {
			t.Errorf("error %q leaks the password or does not name the variable", got)
		}
	}
}

func TestKeys(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_700_000_000_000).UTC()
		k := quire.APIKey{ID: "key_1", Email: "a@example.com", Prefix: "sd_abc", Hash: "h1", CreatedAt: now}
		if err := db.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateKey(ctx, quire.APIKey{ID: "key_2", Email: "b@example.com", Prefix: "sd_x", Hash: "h1", CreatedAt: now}); err == nil {
			t.Error("a second key with the same hash was accepted")
		}
		got, err := db.KeyByHash(ctx, "h1")
		if err != nil || got.ID != "key_1" || got.Email != "a@example.com" || !got.CreatedAt.Equal(now) || !got.Active() || !got.LastUsedAt.IsZero() {
			t.Fatalf("KeyByHash = %+v, %v", got, err)
		}
		if _, err := db.KeyByHash(ctx, "nope"); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("unknown hash: %v, want ErrNotFound", err)
		}

		if err := db.TouchKey(ctx, "key_1", now.Add(time.Minute), time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := db.TouchKey(ctx, "key_1", now.Add(90*time.Second), time.Minute); err != nil {
			t.Fatal(err)
		}
		got, _ = db.KeyByHash(ctx, "h1")
		if !got.LastUsedAt.Equal(now.Add(time.Minute)) {
			t.Errorf("last used %v, want the first touch (the second is within a minute)", got.LastUsedAt)
		}

		if err := db.RevokeKey(ctx, "key_1", now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := db.RevokeKey(ctx, "key_1", now.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := db.RevokeKey(ctx, "key_404", now); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("revoke unknown: %v", err)
		}
		keys, err := db.Keys(ctx)
		if err != nil || len(keys) != 1 || keys[0].Active() || !keys[0].RevokedAt.Equal(now.Add(time.Hour)) {
			t.Fatalf("Keys = %+v, %v", keys, err)
		}
	})
}

func TestCodes(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_700_000_000_000).UTC()
		put := func(hash string) {
			t.Helper()
			if err := db.PutCode(ctx, quire.LoginCode{Email: "a@example.com", Hash: hash, CreatedAt: now, ExpiresAt: now.Add(15 * time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		put("old")
		if h, err := db.AttemptCode(ctx, "a@example.com", now, 3); err != nil || h != "old" {
			t.Fatalf("attempt = %q, %v", h, err)
		}
		put("new") // replaces the code and resets the attempts
		for i := 0; i < 3; i++ {
			if h, err := db.AttemptCode(ctx, "a@example.com", now, 3); err != nil || h != "new" {
				t.Fatalf("attempt %d = %q, %v", i+1, h, err)
			}
		}
		if _, err := db.AttemptCode(ctx, "a@example.com", now, 3); !errors.Is(err, quire.ErrNotFound) {
			t.Fatalf("4th attempt with max 3: %v, want ErrNotFound", err)
		}

		put("fresh")
		if _, err := db.AttemptCode(ctx, "a@example.com", now.Add(15*time.Minute), 3); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("expired code: %v, want ErrNotFound", err)
		}
		key := quire.APIKey{ID: "key_r", Email: "a@example.com", Prefix: "sd_", Hash: "kh", CreatedAt: now}
		if err := db.RedeemCode(ctx, "a@example.com", "wrong", key); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("redeem with another hash: %v", err)
		}
		if err := db.RedeemCode(ctx, "a@example.com", "fresh", key); err != nil {
			t.Fatal(err)
		}
		if err := db.RedeemCode(ctx, "a@example.com", "fresh", key); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("second redeem: %v, want ErrNotFound", err)
		}
		if _, err := db.KeyByHash(ctx, "kh"); err != nil {
			t.Errorf("redeemed key not stored: %v", err)
		}

		put("stale")
		if n, err := db.DeleteExpiredCodes(ctx, now.Add(time.Hour)); err != nil || n != 1 {
			t.Errorf("DeleteExpiredCodes = %d, %v", n, err)
		}
	})
}

func TestConcurrentAttemptsNeverExceedTheLimit(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.Now()
		db.PutCode(ctx, quire.LoginCode{Email: "r@example.com", Hash: "h", CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
		var wg sync.WaitGroup
		var mu sync.Mutex
		granted := 0
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := db.AttemptCode(ctx, "r@example.com", now, 5); err == nil {
					mu.Lock()
					granted++
					mu.Unlock()
				} else if !errors.Is(err, quire.ErrNotFound) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if granted != 5 {
			t.Errorf("%d attempts granted, want exactly 5", granted)
		}
	})
}

func TestHit(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		start := time.UnixMilli(1_700_000_400_000).UTC() // a multiple of 10 minutes
		for i := 1; i <= 3; i++ {
			n, reset, err := db.Hit(ctx, "b", start.Add(time.Duration(i)*time.Second), 10*time.Minute, 1)
			if err != nil || n != i || !reset.Equal(start.Add(10*time.Minute)) {
				t.Fatalf("hit %d = %d, %v, %v", i, n, reset, err)
			}
		}
		if n, _, _ := db.Hit(ctx, "other", start, 10*time.Minute, 1); n != 1 {
			t.Errorf("another bucket starts at %d", n)
		}
		if n, _, _ := db.Hit(ctx, "b", start.Add(10*time.Minute), 10*time.Minute, 1); n != 1 {
			t.Errorf("next window starts at %d, want 1", n)
		}
		if err := db.DeleteStaleLimits(ctx, start.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if n, _, _ := db.Hit(ctx, "b", start.Add(10*time.Minute), 10*time.Minute, 1); n != 1 {
			t.Errorf("after cleanup the count restarts, got %d", n)
		}
	})
}

func TestEnsureSetting(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		if v, err := db.EnsureSetting(ctx, "s", "first"); err != nil || v != "first" {
			t.Fatalf("= %q, %v", v, err)
		}
		if v, err := db.EnsureSetting(ctx, "s", "second"); err != nil || v != "first" {
			t.Fatalf("second = %q, %v, want the first value kept", v, err)
		}
	})
}

func TestSQLiteOnlySQLIsAppliedOnSQLiteOnly(t *testing.T) {
	for _, b := range storetest.Backends {
		t.Run(b, func(t *testing.T) {
			u := storetest.URL(t, b)
			storetest.Open(t, u)
			raw := storetest.SQL(t, u)
			if b == "postgres" { // the migration ran, with the SQLite part as a comment
				var n int
				if err := raw.QueryRow(`SELECT COUNT(*) FROM documents`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return
			}
			var ddl string
			if err := raw.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'documents'`).Scan(&ddl); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(ddl, "WITHOUT ROWID") {
				t.Errorf("documents is not WITHOUT ROWID on SQLite: %s", ddl)
			}
		})
	}
}

func TestSignings(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		at := time.UnixMilli(1_700_000_000_000).UTC()
		s := quire.Signing{SignedDigest: "d1", EventID: "evt-1", InputSHA256: "in", OutputSHA256: "out",
			SignerEmail: "ann@example.com", APIKeyID: "key_1", SignedAt: at, AuditTrail: []quire.AuditEvent{
				{Type: "ready", Timestamp: at.Add(-time.Minute)},
				{Type: "submit", Timestamp: at.Add(-time.Second), Data: map[string]any{"fieldId": "name", "n": 2.5}}}}
		if err := db.RecordSigning(ctx, s); err != nil {
			t.Fatal(err)
		}
		// Two identical requests in the same second sign the same bytes:
		// the second finds its record made, and the first one stands.
		again := s
		again.APIKeyID = "key_2"
		if err := db.RecordSigning(ctx, again); err != nil {
			t.Errorf("the same signature recorded again: %v", err)
		}
		got, err := db.SigningByDigest(ctx, "d1")
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Errorf("SigningByDigest = %+v, %v", got, err)
		}
		if _, err := db.SigningByDigest(ctx, "d2"); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("unknown digest: %v", err)
		}
		// A record without a trail (as before migration 0007) reads back without one.
		if err := db.RecordSigning(ctx, quire.Signing{SignedDigest: "d3", EventID: "evt-3", SignedAt: at}); err != nil {
			t.Fatal(err)
		}
		if got, err := db.SigningByDigest(ctx, "d3"); err != nil || len(got.AuditTrail) != 0 {
			t.Errorf("SigningByDigest without a trail = %+v, %v", got, err)
		}
	})
}

func TestSigningRoots(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.Now()
		for _, der := range [][]byte{[]byte("root-a"), []byte("root-b"), []byte("root-a")} {
			if err := db.AddSigningRoot(ctx, der, now); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.AddTSARoot(ctx, []byte("tsa-root"), now); err != nil {
			t.Fatal(err)
		}
		roots, err := db.SigningRoots(ctx)
		if err != nil || len(roots) != 2 {
			t.Fatalf("roots = %q, %v; want root-a and root-b once each", roots, err)
		}
		tsa, err := db.TSARoots(ctx)
		if err != nil || len(tsa) != 1 || string(tsa[0]) != "tsa-root" {
			t.Fatalf("TSA roots = %q, %v; want tsa-root alone (signing roots are no TSA roots)", tsa, err)
		}
	})
}

// TestOpenRefusesANewerSchema: a binary finding a migration it does not
// know refuses to start, naming both schema versions.
func TestOpenRefusesANewerSchema(t *testing.T) {
	for _, b := range storetest.Backends {
		t.Run(b, func(t *testing.T) {
			u := storetest.URL(t, b)
			storetest.Open(t, u)
			var latest int
			raw := storetest.SQL(t, u)
			if err := raw.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&latest); err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future.sql', 0)`, latest+1); err != nil {
				t.Fatal(err)
			}
			_, err := store.Open(ctx, u, t.TempDir())
			want := fmt.Sprintf("schema version %d, this binary knows versions up to %d", latest+1, latest)
			if !errors.Is(err, store.ErrSchemaTooNew) || !strings.Contains(err.Error(), want) {
				t.Errorf("Open on a newer schema: %v, want %q", err, want)
			}
		})
	}
}

// TestSnapshot: the copy of a SQLite database opens with the same rows
// (a signing's audit trail among them);
// PostgreSQL refuses (pg_dump does its backups).
func TestSnapshot(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		at := time.UnixMilli(1_700_000_000_000).UTC()
		trail := []quire.AuditEvent{{Type: "submit", Timestamp: at, Data: map[string]any{"via": "test"}}}
		if err := db.RecordSigning(ctx, quire.Signing{SignedDigest: "d1", EventID: "evt-1", SignedAt: at, AuditTrail: trail}); err != nil {
			t.Fatal(err)
		}
		// Not yet counted: the copy must hold the event log too.
		if err := db.RecordOpens(ctx, []quire.OpenEvent{{LicenseKey: "k", DocumentID: "D", ReceivedAt: at, Metadata: "{}"}}); err != nil {
			t.Fatal(err)
		}
		path := t.TempDir() + "/copy.db"
		err := db.Snapshot(ctx, path)
		if db.Backend() == "postgres" {
			if !errors.Is(err, store.ErrNotSQLite) {
				t.Errorf("Snapshot on PostgreSQL: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		want, err := db.SchemaVersion(ctx)
		if err != nil || want < 1 {
			t.Fatalf("schema version %d: %v", want, err)
		}
		copied := storetest.Open(t, "sqlite:"+path)
		if got, err := copied.SchemaVersion(ctx); err != nil || got != want {
			t.Errorf("copy at schema version %d (%v), want %d", got, err, want)
		}
		if got, err := copied.SigningByDigest(ctx, "d1"); err != nil || !reflect.DeepEqual(got.AuditTrail, trail) {
			t.Errorf("the copy's signing: %+v, %v; want the audit trail %+v", got, err, trail)
		}
		if rows, err := copied.Usage(ctx, 0, 1<<40, false, nil); err != nil || len(rows) != 1 || rows[0].Opens != 1 {
			t.Errorf("the copy's usage: %+v (%v), want the 1 open recorded before the copy", rows, err)
		}
	})
}
