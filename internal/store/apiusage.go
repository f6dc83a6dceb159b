package store

import (
	"context"
	"database/sql"
	"errors"
	"math"

	"github.com/quire-dev/quire"
)

// AddAPIUsage commits the charges of several answers (Rows' Period: a
// day) in one transaction, a group commit: each is counted whole, unless
// its key's quota refuses it, and the others are counted either way.
func (db *DB) AddAPIUsage(ctx context.Context, charges []quire.Charge) ([]quire.ChargeResult, error) {
	out := make([]quire.ChargeResult, len(charges))
	defer db.writeTurn()()
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for i, c := range charges {
			var err error
			if out[i], err = db.charge(ctx, tx, c); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// RecordSigningCharged stores the record of a signature and the charge of
// its answer in one transaction: one commit for both. A charge the quota
// refuses stores neither.
func (db *DB) RecordSigningCharged(ctx context.Context, s quire.Signing, c quire.Charge) (quire.ChargeResult, error) {
	var res quire.ChargeResult
	defer db.writeTurn()()
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if res, err = db.charge(ctx, tx, c); err != nil {
			return err
		}
		if res.Refused {
			return errRefused
		}
		return db.insertSigning(ctx, tx, s)
	})
	if errors.Is(err, errRefused) {
		err = nil
	}
	return res, err
}

// errRefused rolls back a transaction whose charge the quota refused.
var errRefused = errors.New("store: refused by the quota")

// charge counts c in tx: its documents in the key's month, unless that
// passes the quota, and then its rows. Its statements are prepared once
// (db.prepared): every metered answer waits for this transaction.
func (db *DB) charge(ctx context.Context, tx *sql.Tx, c quire.Charge) (quire.ChargeResult, error) {
	if len(c.Rows) == 0 {
		return quire.ChargeResult{}, nil
	}
	if c.Hold != "" { // the answer's count ends its hold
		if err := db.execTx(ctx, tx, `DELETE FROM key_reservations WHERE id = ?`, c.Hold); err != nil {
			return quire.ChargeResult{}, err
		}
	}
	month := quire.Month(quire.DayStart(c.Rows[0].Period))
	docs, limit := c.Documents(), c.Quota
	if limit == 0 {
		limit = math.MaxInt64 - docs
	}
	var res quire.ChargeResult
	err := sql.ErrNoRows // a first charge over the quota is refused without a try
	if docs <= limit {
		err = db.queryRowTx(ctx, tx, `INSERT INTO key_month_documents (key_id, month, documents) VALUES (?, ?, ?)
		ON CONFLICT (key_id, month) DO UPDATE SET documents = key_month_documents.documents + excluded.documents
		WHERE key_month_documents.documents + excluded.documents <= ?
		RETURNING documents`, c.KeyID, month, docs, limit).Scan(&res.MonthDocuments)
	}
	if errors.Is(err, sql.ErrNoRows) { // over the quota: nothing changed
		res.Refused = true
		err = db.queryRowTx(ctx, tx, `SELECT COALESCE(SUM(documents), 0) FROM key_month_documents WHERE key_id = ? AND month = ?`, c.KeyID, month).Scan(&res.MonthDocuments)
	}
	if err != nil || res.Refused {
		return res, err
	}
	for _, r := range c.Rows {
		err := db.execTx(ctx, tx, `INSERT INTO api_usage
		(key_id, day, month, operation, requests, documents, pages, input_bytes, engine_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (key_id, day, operation) DO UPDATE SET
			requests = api_usage.requests + excluded.requests,
			documents = api_usage.documents + excluded.documents,
			pages = api_usage.pages + excluded.pages,
			input_bytes = api_usage.input_bytes + excluded.input_bytes,
			engine_ms = api_usage.engine_ms + excluded.engine_ms`,
			r.KeyID, r.Period, month, r.Operation, r.Requests, r.Documents, r.Pages, r.InputBytes, int64(math.Round(r.EngineSeconds*1000)))
		if err != nil {
			return res, err
		}
	}
	return res, nil
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
	err := db.queryRow(ctx, `SELECT documents FROM key_month_documents WHERE key_id = ? AND month = ?`, id, m).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}
