package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestIntakeDoesNotWaitForTheMainFile: on SQLite, intake appends to the
// event log, so that it goes on while another writer (the fold, a
// signing, another process) holds the main file's write lock. Before the
// log, it waited for the lock until its time ran out.
func TestIntakeDoesNotWaitForTheMainFile(t *testing.T) {
	u := storetest.URL(t, "sqlite")
	db := storetest.Open(t, u)
	main, err := sql.Open("sqlite3", "file:"+u[len("sqlite:"):])
	if err != nil {
		t.Fatal(err)
	}
	defer main.Close()
	lock, err := main.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.Exec(`UPDATE telemetry_folded SET event_id = event_id`); err != nil { // the write lock, held
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := db.RecordOpens(short, []quire.OpenEvent{{LicenseKey: "k", DocumentID: "D", ReceivedAt: time.Now(), Metadata: "{}"}}); err != nil {
		t.Fatalf("an open while the main file is locked: %v", err)
	}
	lock.Rollback()
	if rows, err := db.Usage(ctx, 0, 1<<40, false, nil); err != nil || len(rows) != 1 || rows[0].Opens != 1 {
		t.Errorf("usage %+v (%v), want the open counted once the lock is gone", rows, err)
	}
}

// TestEventLogTakesOverTheMainFilesEvents upgrades a database whose raw
// events are in the main file (as every database was before the event
// log): they move to the log, are counted once, and new events follow
// them. Then the log is lost: new events get ids after the watermark, so
// that they are counted too.
func TestEventLogTakesOverTheMainFilesEvents(t *testing.T) {
	dir := t.TempDir()
	u := "sqlite:" + filepath.Join(dir, "quire.db")
	storetest.Open(t, u).Close()
	removeEventLog(t, dir)
	raw := storetest.SQL(t, u) // no log to attach: the main file alone
	day := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).UnixMilli()
	for _, q := range []string{
		`CREATE TABLE telemetry_events (id INTEGER PRIMARY KEY AUTOINCREMENT, license_key TEXT NOT NULL, document_id TEXT NOT NULL,
			received_at BIGINT NOT NULL, occurred_at TEXT NOT NULL, document_created_at TEXT, library_version TEXT NOT NULL,
			hostname TEXT NOT NULL, metadata TEXT NOT NULL)`,
		`INSERT INTO telemetry_events (license_key, document_id, received_at, occurred_at, library_version, hostname, metadata)
			VALUES ('k', 'A', ?, 'x', '', '', '{}'), ('k', 'B', ?, 'x', '', '', '{}')`,
	} {
		if _, err := raw.Exec(q, day, day); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	opens := func(db *store.DB) int64 {
		t.Helper()
		rows, err := db.Usage(ctx, 0, 1<<40, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, r := range rows {
			n += r.Opens
		}
		return n
	}
	record := func(db *store.DB, doc string) {
		t.Helper()
		if err := db.RecordOpens(ctx, []quire.OpenEvent{{LicenseKey: "k", DocumentID: doc, ReceivedAt: time.UnixMilli(day), Metadata: "{}"}}); err != nil {
			t.Fatal(err)
		}
	}
	db := storetest.Open(t, u)
	record(db, "C")
	if n := opens(db); n != 3 {
		t.Errorf("%d opens after the upgrade, want the 2 moved and the 1 new", n)
	}
	var tables int
	if err := storetest.SQL(t, u).QueryRow(`SELECT COUNT(*) FROM main.sqlite_master WHERE name = 'telemetry_events'`).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("the main file still has telemetry_events (%v)", err)
	}
	db.Close()

	removeEventLog(t, dir)
	db = storetest.Open(t, u)
	record(db, "D")
	if n := opens(db); n != 4 {
		t.Errorf("%d opens after the log was lost, want 4: the new open counted", n)
	}
}

func removeEventLog(t *testing.T, dir string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(dir, "quire-events.db"+suffix)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}
