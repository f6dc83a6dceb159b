package store

import (
	"context"
	"database/sql"
	"sort"
	"strings"
	"time"

	"github.com/quire-dev/quire"
)

// RecordOpens stores events in one transaction: the raw events, and the
// per-document and per-day counts that billing reads. Rows are written in
// key order so that concurrent writers (several instances on PostgreSQL)
// lock them in the same order and cannot deadlock.
func (db *DB) RecordOpens(ctx context.Context, events []quire.OpenEvent) error {
	docs, days := aggregate(events)
	return db.inTx(ctx, func(tx *sql.Tx) error {
		raw := make([][]any, len(events))
		for i, e := range events {
			raw[i] = []any{e.LicenseKey, e.DocumentID, e.ReceivedAt.UnixMilli(), e.OccurredAt, e.DocumentCreatedAt,
				e.LibraryVersion, e.Hostname, e.Metadata}
		}
		if err := db.insertRows(ctx, tx, `INSERT INTO telemetry_events (license_key, document_id, received_at,
			occurred_at, document_created_at, library_version, hostname, metadata) VALUES `, raw, ""); err != nil {
			return err
		}
		g, l := db.dialect.greatest, db.dialect.least
		if err := db.insertRows(ctx, tx, `INSERT INTO documents (license_key, document_id, first_seen, last_seen,
			opens, first_day, first_month) VALUES `, docs, ` ON CONFLICT (license_key, document_id) DO UPDATE SET
			opens = documents.opens + excluded.opens,
			last_seen = `+g+`(documents.last_seen, excluded.last_seen),
			first_day = CASE WHEN excluded.first_seen < documents.first_seen THEN excluded.first_day ELSE documents.first_day END,
			first_month = CASE WHEN excluded.first_seen < documents.first_seen THEN excluded.first_month ELSE documents.first_month END,
			first_seen = `+l+`(documents.first_seen, excluded.first_seen)`); err != nil {
			return err
		}
		return db.insertRows(ctx, tx, `INSERT INTO document_days (license_key, document_id, day, month, opens) VALUES `,
			days, ` ON CONFLICT (license_key, document_id, day) DO UPDATE SET opens = document_days.opens + excluded.opens`)
	})
}

// aggregate folds events into one row per document and one per document
// and day (a statement may not update the same row twice), sorted by key.
func aggregate(events []quire.OpenEvent) (docs, days [][]any) {
	type docKey struct{ license, doc string }
	type dayKey struct {
		docKey
		day int64
	}
	byDoc := map[docKey][]any{}
	byDay := map[dayKey][]any{}
	for _, e := range events {
		k, at := docKey{e.LicenseKey, e.DocumentID}, e.ReceivedAt.UnixMilli()
		day := quire.Day(e.ReceivedAt)
		if r, ok := byDoc[k]; ok {
			if at < r[2].(int64) {
				r[2], r[5], r[6] = at, day, quire.Month(e.ReceivedAt)
			}
			r[3] = max(r[3].(int64), at)
			r[4] = r[4].(int64) + 1
		} else {
			byDoc[k] = []any{k.license, k.doc, at, at, int64(1), day, quire.Month(e.ReceivedAt)}
		}
		dk := dayKey{k, day}
		if r, ok := byDay[dk]; ok {
			r[4] = r[4].(int64) + 1
		} else {
			byDay[dk] = []any{k.license, k.doc, day, quire.Month(e.ReceivedAt), int64(1)}
		}
	}
	for _, r := range byDoc {
		docs = append(docs, r)
	}
	for _, r := range byDay {
		days = append(days, r)
	}
	byKey := func(rows [][]any) {
		sort.Slice(rows, func(i, j int) bool {
			a, b := rows[i], rows[j]
			if a[0] != b[0] {
				return a[0].(string) < b[0].(string)
			}
			if a[1] != b[1] {
				return a[1].(string) < b[1].(string)
			}
			return a[2].(int64) < b[2].(int64)
		})
	}
	byKey(docs)
	byKey(days)
	return docs, days
}

// rowsPerStatement keeps multi-row statements under the placeholder limit
// of PostgreSQL (65535).
const rowsPerStatement = 400

// sqliteChunks are the row counts of the multi-row statements used on
// SQLite, largest first: few distinct statement texts, so each is parsed
// once and kept (see stmt), and few calls per batch.
var sqliteChunks = []int{32, 8, 1}

// insertRows runs head + "(?, ...), (?, ...)" + tail for rows. On
// PostgreSQL a statement holds up to rowsPerStatement rows (one round trip
// for many rows; the server parses fast). SQLite is in-process, where
// parsing a statement costs more than running it: there rows go in
// prepared statements of a few fixed sizes.
func (db *DB) insertRows(ctx context.Context, tx *sql.Tx, head string, rows [][]any, tail string) error {
	for len(rows) > 0 {
		n := min(len(rows), rowsPerStatement)
		if !db.dialect.multiRow {
			for _, c := range sqliteChunks {
				if len(rows) >= c {
					n = c
					break
				}
			}
		}
		if err := db.insertChunk(ctx, tx, head, rows[:n], tail); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

func (db *DB) insertChunk(ctx context.Context, tx *sql.Tx, head string, rows [][]any, tail string) error {
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(rows[0])), ", ") + ")"
	query := head + strings.TrimSuffix(strings.Repeat(tuple+", ", len(rows)), ", ") + tail
	args := make([]any, 0, len(rows)*len(rows[0]))
	for _, r := range rows {
		args = append(args, r...)
	}
	if db.dialect.multiRow {
		_, err := tx.ExecContext(ctx, db.q(query), args...)
		return err
	}
	stmt, err := db.prepared(ctx, tx, query)
	if err != nil {
		return err
	}
	_, err = stmt.ExecContext(ctx, args...)
	return err
}

// DeleteEventsBefore drops raw events received before cutoff (retention);
// the per-document and per-day counts stay.
func (db *DB) DeleteEventsBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := db.exec(ctx, `DELETE FROM telemetry_events WHERE received_at < ?`, cutoff.UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Usage counts, per license key and period, the documents first seen and
// the documents opened, and the opens, on the UTC days [fromDay, toDay).
// byMonth groups by month instead of day. keys, when not nil, restricts the
// license keys.
func (db *DB) Usage(ctx context.Context, fromDay, toDay int64, byMonth bool, keys []string) ([]quire.UsageRow, error) {
	newCol, dayCol := "first_day", "day"
	if byMonth {
		newCol, dayCol = "first_month", "month"
	}
	filter, args := "", []any{fromDay, toDay}
	if keys != nil {
		if len(keys) == 0 {
			return nil, nil
		}
		filter = " AND license_key IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(keys)), ", ") + ")"
		for _, k := range keys {
			args = append(args, k)
		}
	}
	rows := map[[2]any]*quire.UsageRow{}
	get := func(key string, period int64) *quire.UsageRow {
		r, ok := rows[[2]any{key, period}]
		if !ok {
			r = &quire.UsageRow{LicenseKey: key, Period: period}
			rows[[2]any{key, period}] = r
		}
		return r
	}
	err := db.scan(ctx, `SELECT license_key, `+newCol+`, COUNT(*) FROM documents
		WHERE first_day >= ? AND first_day < ?`+filter+` GROUP BY license_key, `+newCol, args, func(s scanner) error {
		var key string
		var period, n int64
		err := s.Scan(&key, &period, &n)
		get(key, period).NewDocuments = n
		return err
	})
	if err != nil {
		return nil, err
	}
	err = db.scan(ctx, `SELECT license_key, `+dayCol+`, COUNT(DISTINCT document_id), SUM(opens) FROM document_days
		WHERE day >= ? AND day < ?`+filter+` GROUP BY license_key, `+dayCol, args, func(s scanner) error {
		var key string
		var period, active, opens int64
		err := s.Scan(&key, &period, &active, &opens)
		r := get(key, period)
		r.ActiveDocuments, r.Opens = active, opens
		return err
	})
	out := make([]quire.UsageRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].LicenseKey != out[j].LicenseKey {
			return out[i].LicenseKey < out[j].LicenseKey
		}
		return out[i].Period < out[j].Period
	})
	return out, err
}

type scanner interface{ Scan(...any) error }

// scan runs query and calls fn for each row.
func (db *DB) scan(ctx context.Context, query string, args []any, fn func(scanner) error) error {
	rows, err := db.sql.QueryContext(ctx, db.q(query), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
