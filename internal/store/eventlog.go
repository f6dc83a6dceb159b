package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// On SQLite the raw telemetry events live in a file of their own, the
// event log (EventLogPath), beside the main database. SQLite lets one
// writer at a time into a file: with the events in the main file, intake
// waited while the fold counted (tens of milliseconds every few thousand
// events) and while any other part of the service wrote. Now intake
// appends to the log alone, and the fold reads the log while it writes the
// counts and the watermark in the main file: the two run at once.
//
// Three pools serve a SQLite store: the main file (DB.sql), the log
// (DB.log), and the fold's (DB.fold): the main file with the log attached
// as "log", whose transactions begin DEFERRED so that reading the log
// takes no lock that intake would wait for (an IMMEDIATE transaction
// locks every attached file).

// EventLogPath is the event log of the SQLite database at path:
// quire.db keeps its events in quire-events.db.
func EventLogPath(path string) string {
	return strings.TrimSuffix(path, ".db") + "-events.db"
}

// eventLogSchema is the log's one table; its ids, drawn by the single
// writer of the file, follow the order of the commits (see migration 0006:
// AUTOINCREMENT, so that ids are never handed out twice).
const eventLogSchema = `CREATE TABLE IF NOT EXISTS telemetry_events (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    license_key         TEXT NOT NULL,
    document_id         TEXT NOT NULL,
    received_at         BIGINT NOT NULL,
    occurred_at         TEXT NOT NULL,
    document_created_at TEXT,
    library_version     TEXT NOT NULL,
    hostname            TEXT NOT NULL,
    metadata            TEXT NOT NULL,
    other_host          BOOLEAN NOT NULL DEFAULT false
)`

// eventColumns are the columns of the events that the main file held
// before the log existed (no other_host: no license had hosts then).
const eventColumns = `id, license_key, document_id, received_at, occurred_at, document_created_at, library_version, hostname, metadata`

// addOtherHost gives a log made before migration 0010 its other_host
// column (the migrations run on the main file only).
const addOtherHost = `ALTER TABLE telemetry_events ADD COLUMN other_host BOOLEAN NOT NULL DEFAULT false`

// openEventLog opens (creating it if needed) the event log of the main
// file, and the fold's pool. It moves into the log the events
// that the main file still holds (written before the log existed), and
// makes the log's next id follow the watermark. The log needs the
// watermark (schema version 6): a database kept at an older version,
// which only tests of migrations do, has no log.
func (db *DB) openEventLog(ctx context.Context) error {
	var watermark int
	if err := db.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master
		WHERE type = 'table' AND name = 'telemetry_folded'`).Scan(&watermark); err != nil || watermark == 0 {
		return err
	}
	logPath := EventLogPath(db.path)
	if err := private(logPath); err != nil {
		return err
	}
	logPool, err := sql.Open("sqlite3", sqliteDSN(logPath, "immediate", "FULL"))
	if err != nil {
		return fmt.Errorf("store: open the event log %s: %w", logPath, err)
	}
	logPool.SetMaxIdleConns(4)
	db.log = &DB{sql: logPool, dialect: sqlite}
	if err := whileBusy(ctx, func() error { _, err := logPool.ExecContext(ctx, eventLogSchema); return err }); err != nil {
		return fmt.Errorf("store: create the event log %s: %w", logPath, err)
	}
	var hasOtherHost bool
	if err := logPool.QueryRowContext(ctx, `SELECT COUNT(*) > 0 FROM pragma_table_info('telemetry_events')
		WHERE name = 'other_host'`).Scan(&hasOtherHost); err != nil {
		return fmt.Errorf("store: read the event log %s: %w", logPath, err)
	}
	if !hasOtherHost {
		if _, err := logPool.ExecContext(ctx, addOtherHost); err != nil {
			return fmt.Errorf("store: add other_host to the event log %s: %w", logPath, err)
		}
	}
	db.fold = sql.OpenDB(attaching{dsn: sqliteDSN(db.path, "deferred", "FULL"), log: logPath})
	db.fold.SetMaxIdleConns(2)
	if err := db.adoptEvents(ctx); err != nil {
		return fmt.Errorf("store: move the raw events into the event log %s: %w", logPath, err)
	}
	return nil
}

// adoptEvents moves the events of the main file's telemetry_events table
// into the log, then drops the table, holding the main file's write lock
// throughout (instances starting at once adopt one after the other). The
// copy commits in the log before the drop commits in the main file, and a
// copy cut short is done again (OR IGNORE: ids are kept). Last, the log's
// next id is set after the watermark, should the log be new beside counts
// of earlier events (a restore of an older archive, or a log lost).
func (db *DB) adoptEvents(ctx context.Context) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var tables int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master
			WHERE type = 'table' AND name = 'telemetry_events'`).Scan(&tables); err != nil || tables == 0 {
			return err
		}
		if _, err := db.fold.ExecContext(ctx, `INSERT OR IGNORE INTO log.telemetry_events (`+eventColumns+`)
			SELECT `+eventColumns+` FROM main.telemetry_events ORDER BY id`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DROP TABLE telemetry_events`)
		return err
	})
	if err != nil {
		return err
	}
	for _, q := range []string{
		`UPDATE log.sqlite_sequence SET seq = (SELECT event_id FROM main.telemetry_folded)
			WHERE name = 'telemetry_events' AND seq < (SELECT event_id FROM main.telemetry_folded)`,
		`INSERT INTO log.sqlite_sequence (name, seq) SELECT 'telemetry_events', event_id FROM main.telemetry_folded
			WHERE NOT EXISTS (SELECT 1 FROM log.sqlite_sequence WHERE name = 'telemetry_events')`,
	} {
		if _, err := db.fold.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// attaching opens connections to a SQLite file with the event log
// attached as "log", written with full fsync like the main file.
type attaching struct {
	dsn, log string
}

func (a attaching) Connect(context.Context) (driver.Conn, error) { return a.Driver().Open(a.dsn) }

func (a attaching) Driver() driver.Driver {
	return &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		if _, err := c.Exec(`ATTACH DATABASE ? AS log`, []driver.Value{a.log}); err != nil {
			return err
		}
		_, err := c.Exec(`PRAGMA log.synchronous = FULL`, nil)
		return err
	}}
}
