package store

import (
	"context"
	"database/sql"
	"math"

	"github.com/quire-dev/quire"
)

// AddAPIUsage adds rows (Period: a day number) to the metering of API
// operations, all in one transaction: a group commit of the answers of
// several requests.
func (db *DB) AddAPIUsage(ctx context.Context, rows []quire.APIUsageRow) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, db.q(`INSERT INTO api_usage
			(key_id, day, month, operation, requests, documents, pages, input_bytes, engine_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (key_id, day, operation) DO UPDATE SET
				requests = api_usage.requests + excluded.requests,
				documents = api_usage.documents + excluded.documents,
				pages = api_usage.pages + excluded.pages,
				input_bytes = api_usage.input_bytes + excluded.input_bytes,
				engine_ms = api_usage.engine_ms + excluded.engine_ms`))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range rows {
			_, err := stmt.ExecContext(ctx, r.KeyID, r.Period, quire.Month(quire.DayStart(r.Period)), r.Operation,
				r.Requests, r.Documents, r.Pages, r.InputBytes, int64(math.Round(r.EngineSeconds*1000)))
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// APIUsage sums the metering of days [fromDay, toDay) per key, operation
// and period (a day, or with byMonth a month), sorted by key and period.
// keys, when not nil, restricts it to those key ids.
func (db *DB) APIUsage(ctx context.Context, fromDay, toDay int64, byMonth bool, keys []string) ([]quire.APIUsageRow, error) {
	period := "day"
	if byMonth {
		period = "month"
	}
	if keys != nil && len(keys) == 0 {
		return nil, nil
	}
	filter, args := inFilter("key_id", keys, fromDay, toDay)
	var out []quire.APIUsageRow
	err := db.scan(ctx, `SELECT key_id, `+period+`, operation, SUM(requests), SUM(documents), SUM(pages), SUM(input_bytes), SUM(engine_ms)
		FROM api_usage WHERE day >= ? AND day < ?`+filter+`
		GROUP BY key_id, `+period+`, operation ORDER BY key_id, `+period+`, operation`, args, func(s scanner) error {
		var r quire.APIUsageRow
		var engineMS int64
		err := s.Scan(&r.KeyID, &r.Period, &r.Operation, &r.Requests, &r.Documents, &r.Pages, &r.InputBytes, &engineMS)
		r.EngineSeconds = float64(engineMS) / 1000
		out = append(out, r)
		return err
	})
	return out, err
}

// MonthDocuments returns the documents key id processed in month m, every
// operation together: what its monthly quota counts.
func (db *DB) MonthDocuments(ctx context.Context, id string, m int64) (int64, error) {
	var n int64
	err := db.queryRow(ctx, `SELECT COALESCE(SUM(documents), 0) FROM api_usage WHERE key_id = ? AND month = ?`, id, m).Scan(&n)
	return n, err
}
