package store

import (
	"context"
	"database/sql"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quire-dev/quire"
)

// RecordOpens commits events. On SQLite it appends the raw events only,
// one row each, to the event log (eventlog.go), which CountPending folds
// later from its watermark; on PostgreSQL it appends the opens to count
// to telemetry_pending as well (see migration 0006 for why), in the same
// statement: a batch of up to rowsPerStatement events is one statement,
// one round trip, atomic without a transaction of its own. Appends write
// few pages however scattered the documents are.
func (db *DB) RecordOpens(ctx context.Context, events []quire.OpenEvent) error {
	const columns = 9
	args := make([]any, 0, len(events)*columns)
	for _, e := range events {
		args = append(args, e.LicenseKey, e.DocumentID, e.ReceivedAt.UnixMilli(), e.OccurredAt, e.DocumentCreatedAt, e.LibraryVersion, e.Hostname, e.OtherHost, e.Metadata)
	}
	head, tail := `INSERT INTO telemetry_events (license_key, document_id, received_at,
		occurred_at, document_created_at, library_version, hostname, other_host, metadata) VALUES `, ""
	if !db.dialect.watermark {
		// The day and month of receipt, as quire.Day and quire.Month.
		head, tail = `WITH e AS (`+head, ` RETURNING license_key, document_id, received_at, other_host)
			INSERT INTO telemetry_pending (license_key, document_id, received_at, other_host, day, month)
			SELECT license_key, document_id, received_at, other_host, received_at / 86400000,
			EXTRACT(YEAR FROM to_timestamp(received_at / 1000.0) AT TIME ZONE 'UTC')::bigint * 12 +
			EXTRACT(MONTH FROM to_timestamp(received_at / 1000.0) AT TIME ZONE 'UTC')::bigint - 1 FROM e`
		if len(events) <= rowsPerStatement {
			return db.insertChunk(ctx, db.sql, head, tail, columns, args)
		}
	}
	target := db
	if db.log != nil {
		target = db.log
	}
	return target.inTx(ctx, func(tx *sql.Tx) error { return target.insertRows(ctx, tx, head, tail, columns, args) })
}

// CountPending folds the opens not yet counted into the per-document and
// per-day counts, oldest first, in transactions of at most Options.CountChunk
// opens, until none is left. Rows are written in key order, so that
// concurrent writers lock them in the same order.
func (db *DB) CountPending(ctx context.Context) error {
	pool := db.sql
	if db.fold != nil {
		pool = db.fold
	}
	for {
		var n int64
		if db.fold != nil {
			// The fold's transaction takes the write lock by writing (see
			// countSome): look first, so that nothing is written when
			// nothing is pending.
			var pending bool
			err := db.fold.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM log.telemetry_events
				WHERE id > (SELECT event_id FROM main.telemetry_folded))`).Scan(&pending)
			if err != nil || !pending {
				return err
			}
		}
		err := transact(ctx, pool, func(tx *sql.Tx) (err error) {
			n, err = db.countSome(ctx, tx)
			return err
		})
		if err != nil || n < int64(db.opt.CountChunk) {
			return err
		}
	}
}

// countSome counts up to Options.CountChunk opens in tx and returns how many it
// counted. On SQLite, the transaction (of the fold's pool, eventlog.go)
// takes the main file's only write lock with its first statement, so the
// watermark it reads is the one it moves; the events after the watermark
// are final, the log's ids following its commits: it counts the next
// Options.CountChunk of them and moves the watermark past them.
// On PostgreSQL, intake on other instances goes on meanwhile, so the
// counts are built from the pending rows that one DELETE removes (a
// statement sees one snapshot, which holds every acknowledged open); the
// advisory lock keeps two instances from counting at once.
func (db *DB) countSome(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	if !db.dialect.watermark {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7261746366)`); err != nil { // any constant shared by all instances
			return 0, err
		}
		err := tx.QueryRowContext(ctx, db.q(`WITH moved AS (DELETE FROM telemetry_pending WHERE ctid IN (
			SELECT ctid FROM telemetry_pending LIMIT ?) RETURNING license_key, document_id, received_at, other_host, day, month),
			docs AS (`+countDocuments(db.dialect, "moved")+`), days AS (`+countDays("moved")+`), opens AS (`+countOpens("moved")+`)
			SELECT COUNT(*) FROM moved`), db.opt.CountChunk).Scan(&n)
		return n, err
	}
	var from int64
	var to sql.NullInt64
	if err := tx.QueryRowContext(ctx, `UPDATE telemetry_folded SET event_id = event_id RETURNING event_id`).Scan(&from); err != nil {
		return 0, err
	}
	err := tx.QueryRowContext(ctx, `SELECT MAX(id), COUNT(*) FROM (SELECT id FROM log.telemetry_events WHERE id > ? ORDER BY id LIMIT ?)`,
		from, db.opt.CountChunk).Scan(&to, &n)
	if err != nil || n == 0 {
		return 0, err
	}
	// The day and month of receipt, as quire.Day and quire.Month.
	events := `(SELECT license_key, document_id, received_at, other_host, received_at / 86400000 AS day,
		CAST(strftime('%Y', received_at / 1000, 'unixepoch') AS INTEGER) * 12 + CAST(strftime('%m', received_at / 1000, 'unixepoch') AS INTEGER) - 1 AS month
		FROM log.telemetry_events WHERE id > ? AND id <= ?) AS events`
	for _, q := range []string{countDocuments(db.dialect, events), countDays(events), countOpens(events)} {
		if _, err := tx.ExecContext(ctx, q, from, to.Int64); err != nil {
			return 0, err
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE telemetry_folded SET event_id = ?`, to.Int64)
	return n, err
}

// ofDocuments selects the opens that count for their document: those with
// a document id from the license's own hosts. (A WHERE clause also keeps
// SQLite from reading the ON CONFLICT of an upsert as a join's.)
const ofDocuments = ` WHERE document_id <> '' AND NOT other_host `

// countDocuments adds the opens in from to the per-document counts.
func countDocuments(d dialect, from string) string {
	return `INSERT INTO documents (license_key, document_id, first_seen, last_seen, opens, first_day, first_month)
		SELECT license_key, document_id, MIN(received_at), MAX(received_at), COUNT(*), MIN(day), MIN(month)
		FROM ` + from + ofDocuments + `GROUP BY license_key, document_id ORDER BY license_key, document_id
		ON CONFLICT (license_key, document_id) DO UPDATE SET
		opens = documents.opens + excluded.opens,
		last_seen = ` + d.greatest + `(documents.last_seen, excluded.last_seen),
		first_day = CASE WHEN excluded.first_seen < documents.first_seen THEN excluded.first_day ELSE documents.first_day END,
		first_month = CASE WHEN excluded.first_seen < documents.first_seen THEN excluded.first_month ELSE documents.first_month END,
		first_seen = ` + d.least + `(documents.first_seen, excluded.first_seen)`
}

// countDays adds the opens in from to the per-day counts.
func countDays(from string) string {
	return `INSERT INTO document_days (day, license_key, document_id, month, opens)
		SELECT day, license_key, document_id, MIN(month), COUNT(*)
		FROM ` + from + ofDocuments + `GROUP BY day, license_key, document_id ORDER BY day, license_key, document_id
		ON CONFLICT (day, license_key, document_id) DO UPDATE SET opens = document_days.opens + excluded.opens`
}

// countOpens adds the opens in from to the per-license counts of each day.
func countOpens(from string) string {
	return `INSERT INTO open_days (day, license_key, month, opens, anonymous_opens, other_host_opens)
		SELECT day, license_key, MIN(month), COUNT(*), SUM(CASE WHEN document_id = '' THEN 1 ELSE 0 END),
		SUM(CASE WHEN other_host THEN 1 ELSE 0 END)
		FROM ` + from + ` WHERE true GROUP BY day, license_key ORDER BY day, license_key
		ON CONFLICT (day, license_key) DO UPDATE SET opens = open_days.opens + excluded.opens,
		anonymous_opens = open_days.anonymous_opens + excluded.anonymous_opens,
		other_host_opens = open_days.other_host_opens + excluded.other_host_opens`
}

// rowsPerStatement keeps multi-row statements under the placeholder limit
// of PostgreSQL (65535).
const rowsPerStatement = 400

// sqliteChunks are the row counts of the multi-row statements used on
// SQLite, largest first: few distinct statement texts, so each is parsed
// once and kept (see stmt), and at most six statements for a batch of up
// to 63 (a batch of 30 took 9 with sizes 32, 8, 1: 11.6 against 13.3-14.3
// CPU µs/event in two of three runs of BenchmarkRecordOpens).
var sqliteChunks = []int{32, 16, 8, 4, 2, 1}

// insertRows runs head + "(?, ...), (?, ...)" + tail for the rows of
// columns values each that args holds one after the other. On
// PostgreSQL a statement holds up to rowsPerStatement rows (one round trip
// for many rows; the server parses fast). SQLite is in-process, where
// parsing a statement costs more than running it: there rows go in
// prepared statements of a few fixed sizes.
func (db *DB) insertRows(ctx context.Context, tx *sql.Tx, head, tail string, columns int, args []any) error {
	for rows := len(args) / columns; rows > 0; {
		n := min(rows, rowsPerStatement)
		if !db.dialect.multiRow {
			for _, c := range sqliteChunks {
				if rows >= c {
					n = c
					break
				}
			}
		}
		if err := db.insertChunk(ctx, tx, head, tail, columns, args[:n*columns]); err != nil {
			return err
		}
		rows, args = rows-n, args[n*columns:]
	}
	return nil
}

// insertChunk runs one statement of insertRows, in tx or, on PostgreSQL,
// on its own (on is a *sql.Tx or the *sql.DB).
func (db *DB) insertChunk(ctx context.Context, on execer, head, tail string, columns int, args []any) error {
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", columns), ", ") + ")"
	query := head + strings.TrimSuffix(strings.Repeat(tuple+", ", len(args)/columns), ", ") + tail
	if db.dialect.multiRow {
		_, err := on.ExecContext(ctx, db.q(query), args...)
		return err
	}
	stmt, err := db.prepared(ctx, on.(*sql.Tx), query)
	if err != nil {
		return err
	}
	_, err = stmt.ExecContext(ctx, args...)
	return err
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// expireChunk is how many raw events one statement of DeleteEventsBefore
// deletes at most: each statement holds the write lock briefly, so intake
// commits go on between them.
const expireChunk = 5000

// DeleteEventsBefore drops raw events received before cutoff (retention);
// the per-document and per-day counts stay. SQLite deletes from the oldest
// id on, only events already counted (it counts first), and stops at the
// first chunk that holds a newer event (ids follow receipt to within a
// request's wait for its commit, so an expired event behind it waits at
// most for the next sweep); PostgreSQL finds expired events with its
// index on received_at.
func (db *DB) DeleteEventsBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	if !db.dialect.watermark {
		return db.deleteChunks(ctx, `DELETE FROM telemetry_events WHERE ctid IN (
			SELECT ctid FROM telemetry_events WHERE received_at < ? LIMIT `+strconv.Itoa(expireChunk)+`)`, cutoff.UnixMilli())
	}
	if err := db.CountPending(ctx); err != nil { // so that the watermark does not hold retention back
		return 0, err
	}
	var folded int64
	if err := db.sql.QueryRowContext(ctx, `SELECT event_id FROM telemetry_folded`).Scan(&folded); err != nil {
		return 0, err
	}
	return db.log.deleteChunks(ctx, `DELETE FROM telemetry_events WHERE id IN (SELECT id FROM telemetry_events
		WHERE id <= ? ORDER BY id LIMIT `+strconv.Itoa(expireChunk)+`) AND received_at < ?`, folded, cutoff.UnixMilli())
}

// deleteChunks runs query, which deletes at most expireChunk rows, until a
// run deletes fewer, and returns how many rows went.
func (db *DB) deleteChunks(ctx context.Context, query string, args ...any) (int64, error) {
	var total int64
	for {
		res, err := db.exec(ctx, query, args...)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if total += n; err != nil || n < expireChunk {
			return total, err
		}
	}
}

// Usage counts, per license key and period, the documents first seen and
// the documents opened, and the opens (and the anonymous and other-host
// ones among them), on the UTC days [fromDay, toDay).
// byMonth groups by month instead of day. keys, when not nil, restricts the
// license keys. It counts the pending opens first, so that the report
// includes every committed open.
func (db *DB) Usage(ctx context.Context, fromDay, toDay int64, byMonth bool, keys []string) ([]quire.UsageRow, error) {
	if err := db.CountPending(ctx); err != nil {
		return nil, err
	}
	newCol, dayCol := "first_day", "day"
	if byMonth {
		newCol, dayCol = "first_month", "month"
	}
	if keys != nil && len(keys) == 0 {
		return nil, nil
	}
	filter, args := inFilter("license_key", keys, fromDay, toDay)
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
	err = db.scan(ctx, `SELECT license_key, `+dayCol+`, COUNT(DISTINCT document_id) FROM document_days
		WHERE day >= ? AND day < ?`+filter+` GROUP BY license_key, `+dayCol, args, func(s scanner) error {
		var key string
		var period, active int64
		err := s.Scan(&key, &period, &active)
		get(key, period).ActiveDocuments = active
		return err
	})
	if err != nil {
		return nil, err
	}
	err = db.scan(ctx, `SELECT license_key, `+dayCol+`, SUM(opens), SUM(anonymous_opens), SUM(other_host_opens) FROM open_days
		WHERE day >= ? AND day < ?`+filter+` GROUP BY license_key, `+dayCol, args, func(s scanner) error {
		var key string
		var period, opens, anonymous, otherHost int64
		err := s.Scan(&key, &period, &opens, &anonymous, &otherHost)
		r := get(key, period)
		r.Opens, r.AnonymousOpens, r.OtherHostOpens = opens, anonymous, otherHost
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

// inFilter is the condition " AND column IN (keys...)" with args and
// then the keys as its arguments; nothing when keys is nil.
func inFilter(column string, keys []string, args ...any) (string, []any) {
	if keys == nil {
		return "", args
	}
	for _, k := range keys {
		args = append(args, k)
	}
	return " AND " + column + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(keys)), ", ") + ")", args
}

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
