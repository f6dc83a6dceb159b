package store_test

import (
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestCountPendingIsExact records opens from two instances sharing one
// database while both count the pending opens at the same time, as two
// telemetry writers and a report do, in transactions of 7 opens: every
// open must be counted once, none twice, none lost.
func TestCountPendingIsExact(t *testing.T) {
	for _, b := range storetest.Backends {
		t.Run(b, func(t *testing.T) {
			u := storetest.URL(t, b)
			chunk := store.Options{CountChunk: 7}
			dbs := []*store.DB{storetest.OpenWith(t, u, chunk), storetest.OpenWith(t, u, chunk)}
			day := time.Date(2026, 11, 22, 23, 59, 59, 0, time.UTC)
			const rounds, docs = 40, 5
			var wg sync.WaitGroup
			errs := make(chan error, 4*rounds)
			for i, db := range dbs {
				wg.Add(2)
				go func() { // intake: each round opens every document once, the last rounds on the next day
					defer wg.Done()
					for r := range rounds {
						at := day.Add(time.Duration(r) * 50 * time.Millisecond)
						events := make([]quire.OpenEvent, docs)
						for d := range events {
							events[d] = quire.OpenEvent{LicenseKey: "k", DocumentID: fmt.Sprintf("DOC-%d", d), ReceivedAt: at,
								OccurredAt: "2026-11-22T23:59:59Z", LibraryVersion: fmt.Sprint(i), Metadata: "{}"}
						}
						errs <- db.RecordOpens(ctx, events)
					}
				}()
				go func() { // counting, concurrently with both instances' intake
					defer wg.Done()
					for range rounds {
						errs <- db.CountPending(ctx)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			rows, err := dbs[0].Usage(ctx, 0, 1<<40, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			var opens, active, news int64
			for _, r := range rows {
				opens, active, news = opens+r.Opens, active+r.ActiveDocuments, news+r.NewDocuments
			}
			// 40 rounds 50 ms apart from 23:59:59: rounds 0-19 on the first day, 20-39 on the next.
			if want := int64(2 * rounds * docs); opens != want || active != 2*docs || news != docs || len(rows) != 2 {
				t.Errorf("usage %+v: %d opens, %d active document-days, %d new documents; want %d, %d, %d over 2 days",
					rows, opens, active, news, want, 2*docs, docs)
			}
			var first, last, n, firstDay, firstMonth int64
			raw := storetest.SQL(t, u)
			if err := raw.QueryRow(`SELECT first_seen, last_seen, opens, first_day, first_month FROM documents WHERE document_id = 'DOC-0'`).Scan(&first, &last, &n, &firstDay, &firstMonth); err != nil {
				t.Fatal(err)
			}
			if first != day.UnixMilli() || last != day.Add((rounds-1)*50*time.Millisecond).UnixMilli() || n != 2*rounds ||
				firstDay != quire.Day(day) || firstMonth != quire.Month(day) {
				t.Errorf("DOC-0: first %d last %d opens %d, day %d month %d", first, last, n, firstDay, firstMonth)
			}
			var month int64
			if err := raw.QueryRow(`SELECT MAX(month) FROM document_days WHERE document_id = 'DOC-0'`).Scan(&month); err != nil || month != quire.Month(day.Add(time.Second)) {
				t.Errorf("document_days of the next day: month %d (%v), want %d", month, err, quire.Month(day.Add(time.Second)))
			}
			if left := uncounted(t, raw, b); left != 0 {
				t.Errorf("%d opens still uncounted after a report", left)
			}
		})
	}
}

// TestDeleteEventsBeforeKeepsNewerEventsAndCounts expires more raw events
// than one chunk deletes, received before the newer ones as in real life.
func TestDeleteEventsBeforeKeepsNewerEventsAndCounts(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.Now()
		var events []quire.OpenEvent
		for i := range 12001 {
			at := now.Add(-100 * 24 * time.Hour)
			if i >= 7001 {
				at = now
			}
			events = append(events, quire.OpenEvent{LicenseKey: "k", DocumentID: fmt.Sprint(i % 10), ReceivedAt: at,
				OccurredAt: "2026-11-22T09:34:00Z", Metadata: "{}"})
		}
		if err := db.RecordOpens(ctx, events); err != nil {
			t.Fatal(err)
		}
		n, err := db.DeleteEventsBefore(ctx, now.Add(-90*24*time.Hour))
		if err != nil || n != 7001 {
			t.Fatalf("deleted %d (%v), want the 7001 expired", n, err)
		}
		if n, err := db.DeleteEventsBefore(ctx, now.Add(-90*24*time.Hour)); err != nil || n != 0 {
			t.Fatalf("second sweep deleted %d (%v), want 0", n, err)
		}
		rows, err := db.Usage(ctx, 0, 1<<40, false, nil)
		var opens int64
		for _, r := range rows {
			opens += r.Opens
		}
		if err != nil || opens != 12001 {
			t.Errorf("%d opens counted (%v), want all 12001: retention keeps the counts", opens, err)
		}
	})
}

// uncounted returns how many events CountPending has yet to count: those
// after the watermark on SQLite, the pending rows on PostgreSQL.
func uncounted(t *testing.T, raw *sql.DB, backend string) int {
	t.Helper()
	query := `SELECT COUNT(*) FROM telemetry_pending`
	if backend == "sqlite" {
		query = `SELECT COUNT(*) FROM telemetry_events WHERE id > (SELECT event_id FROM telemetry_folded)`
	}
	var n int
	if err := raw.QueryRow(query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWatermarkMigrationCountsThePendingOpens upgrades a SQLite database
// written by the two-table intake (raw event + pending open): the opens
// still pending are counted once, those counted before are not counted
// again, and intake goes on from there.
func TestWatermarkMigrationCountsThePendingOpens(t *testing.T) {
	u := storetest.URL(t, "sqlite")
	old := openAt(t, u, 5)
	day := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	raw := storetest.SQL(t, u)
	insert := func(doc string, pending bool) {
		t.Helper()
		at := day.UnixMilli()
		_, err := raw.Exec(`INSERT INTO telemetry_events (license_key, document_id, received_at, occurred_at, library_version, hostname, metadata)
			VALUES ('k', ?, ?, '2026-11-22T10:00:00Z', '', '', '{}')`, doc, at)
		if err == nil && pending {
			_, err = raw.Exec(`INSERT INTO telemetry_pending VALUES ('k', ?, ?, ?, ?)`, doc, at, quire.Day(day), quire.Month(day))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, doc := range []string{"A", "B"} { // counted before the upgrade
		insert(doc, false)
		_, err := raw.Exec(`INSERT INTO documents VALUES ('k', ?, ?, ?, 1, ?, ?)`, doc, day.UnixMilli(), day.UnixMilli(), quire.Day(day), quire.Month(day))
		if err == nil {
			_, err = raw.Exec(`INSERT INTO document_days VALUES (?, 'k', ?, ?, 1)`, quire.Day(day), doc, quire.Month(day))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	insert("A", true) // pending at the upgrade
	insert("C", true)
	old.Close()

	db := storetest.Open(t, u)
	if err := db.RecordOpens(ctx, []quire.OpenEvent{{LicenseKey: "k", DocumentID: "C", ReceivedAt: day, OccurredAt: "x", Metadata: "{}"}}); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Usage(ctx, 0, 1<<40, false, nil)
	if err != nil || len(rows) != 1 || rows[0].Opens != 5 || rows[0].NewDocuments != 3 || rows[0].ActiveDocuments != 3 {
		t.Errorf("usage after the upgrade %+v (%v), want 5 opens of 3 new documents", rows, err)
	}
	var tables int
	raw.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'telemetry_pending'`).Scan(&tables)
	if tables != 0 {
		t.Error("telemetry_pending is still there")
	}
}

// TestCountingGoesOnAfterRetentionEmptiedTheEvents: ids are never handed
// out again, so events after a retention that deleted every event are
// still after the watermark.
func TestCountingGoesOnAfterRetentionEmptiedTheEvents(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.Now()
		old := now.Add(-100 * 24 * time.Hour)
		for _, at := range []time.Time{old, old, now} {
			if err := db.RecordOpens(ctx, []quire.OpenEvent{{LicenseKey: "k", DocumentID: "D", ReceivedAt: at, OccurredAt: "x", Metadata: "{}"}}); err != nil {
				t.Fatal(err)
			}
			if at == now {
				break
			}
			if n, err := db.DeleteEventsBefore(ctx, now.Add(-90*24*time.Hour)); err != nil || n != 1 {
				t.Fatalf("retention deleted %d (%v), want the 1 event", n, err)
			}
		}
		rows, err := db.Usage(ctx, 0, 1<<40, false, nil)
		var opens int64
		for _, r := range rows {
			opens += r.Opens
		}
		if err != nil || opens != 3 {
			t.Errorf("%d opens counted (%v), want 3", opens, err)
		}
	})
}

// TestOpensCountOnTheirUTCDayAndMonth: the fold (SQLite) and intake
// (PostgreSQL) compute the day and month of receipt in SQL; they must be
// those of quire.Day and quire.Month, across a year's end.
func TestOpensCountOnTheirUTCDayAndMonth(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		last := time.Date(2026, 12, 31, 23, 59, 59, 999e6, time.UTC)
		var events []quire.OpenEvent
		for _, at := range []time.Time{last, last.Add(time.Millisecond)} {
			events = append(events, quire.OpenEvent{LicenseKey: "k", DocumentID: at.String(), ReceivedAt: at, OccurredAt: "x", Metadata: "{}"})
		}
		if err := db.RecordOpens(ctx, events); err != nil {
			t.Fatal(err)
		}
		for _, byMonth := range []bool{false, true} {
			rows, err := db.Usage(ctx, 0, 1<<40, byMonth, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := []int64{quire.Day(last), quire.Day(last) + 1}
			if byMonth {
				want = []int64{quire.Month(last), quire.Month(last) + 1}
			}
			if len(rows) != 2 || rows[0].Period != want[0] || rows[1].Period != want[1] || rows[0].NewDocuments != 1 || rows[1].Opens != 1 {
				t.Errorf("by month %v: %+v, want one new document in each of periods %v", byMonth, rows, want)
			}
		}
	})
}

// TestAnonymousAndOtherHostOpensCountApart: every open is in Opens; those
// without an id and those from another host are counted apart, and never
// as documents.
func TestAnonymousAndOtherHostOpensCountApart(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
		open := func(doc string, other bool) quire.OpenEvent {
			return quire.OpenEvent{LicenseKey: "k", DocumentID: doc, OtherHost: other, ReceivedAt: at, OccurredAt: "x", Metadata: "{}"}
		}
		if err := db.RecordOpens(ctx, []quire.OpenEvent{open("D", false), open("D", false), open("", false), open("E", true), open("", true)}); err != nil {
			t.Fatal(err)
		}
		if err := db.CountPending(ctx); err != nil { // counted in two folds, as they come
			t.Fatal(err)
		}
		if err := db.RecordOpens(ctx, []quire.OpenEvent{open("", false), open("F", false)}); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Usage(ctx, 0, 1<<40, true, nil)
		want := quire.UsageRow{LicenseKey: "k", Period: quire.Month(at), NewDocuments: 2, ActiveDocuments: 2, Opens: 7, AnonymousOpens: 3, OtherHostOpens: 2}
		if err != nil || len(rows) != 1 || rows[0] != want {
			t.Errorf("usage %+v (%v), want %+v", rows, err, want)
		}
	})
}

// TestHostsMigrationKeepsTheCounts upgrades a database counted before
// migration 0010 (on SQLite, with an event log of the old columns): the
// opens counted before stay in the reports, the opens pending at the
// upgrade are counted after it.
func TestHostsMigrationKeepsTheCounts(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			u := storetest.URL(t, backend)
			old := openAt(t, u, 9)
			day := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			raw := storetest.SQL(t, u)
			at, d, m := day.UnixMilli(), quire.Day(day), quire.Month(day)
			stmts := []string{
				fmt.Sprintf(`INSERT INTO documents VALUES ('k', 'A', %d, %d, 2, %d, %d)`, at, at, d, m),
				fmt.Sprintf(`INSERT INTO document_days VALUES (%d, 'k', 'A', %d, 2)`, d, m),
				fmt.Sprintf(`INSERT INTO telemetry_events (license_key, document_id, received_at, occurred_at, library_version, hostname, metadata)
					VALUES ('k', 'B', %d, 'x', '', '', '{}')`, at), // pending
				`ALTER TABLE log.telemetry_events DROP COLUMN other_host`, // a log of the old columns
			}
			if backend != "sqlite" {
				stmts[3] = fmt.Sprintf(`INSERT INTO telemetry_pending VALUES ('k', 'B', %d, %d, %d)`, at, d, m)
			}
			for _, q := range stmts {
				if _, err := raw.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			old.Close()

			db := storetest.Open(t, u)
			if err := db.RecordOpens(ctx, []quire.OpenEvent{{LicenseKey: "k", ReceivedAt: day, OccurredAt: "x", Metadata: "{}"}}); err != nil {
				t.Fatal(err)
			}
			rows, err := db.Usage(ctx, 0, 1<<40, false, nil)
			if err != nil || len(rows) != 1 || rows[0].Opens != 4 || rows[0].AnonymousOpens != 1 || rows[0].NewDocuments != 2 {
				t.Errorf("usage after the upgrade %+v (%v), want 4 opens (1 anonymous) of 2 new documents", rows, err)
			}
		})
	}
}
