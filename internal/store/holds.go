package store

import (
	"context"
	"database/sql"

	"github.com/quire-dev/quire"
)

// HoldRequest admits request h.ID of key h.KeyID while it is in progress:
// as one of the key's h.Concurrent requests at once, and as the holder of
// one document of its h.Quota this month, unless the key's requests in
// progress, or the month's documents and the holds on the quota of its
// requests in progress, under live leases (every instance's), reach a
// limit. The checks and the holds are one atomic step, serialised per key,
// in one round trip on PostgreSQL (quire_hold_request, migration 0020).
// ReleaseRequest ends both holds; the commit of the request's charge ends
// the one on the quota.
//
// A hold need not survive a crash of the database (the charge is checked
// again when counted, and the requests in progress then end): it is
// written without waiting for the disk (db.holds), and costs a request no
// more than the round trip.
func (db *DB) HoldRequest(ctx context.Context, h quire.RequestHold) (quire.RequestHeld, error) {
	var out quire.RequestHeld
	if db.dialect.name != "sqlite" {
		err := db.queryRow(ctx, `SELECT running, documents, held, taken FROM quire_hold_request(?, ?, ?, ?, ?, ?)`,
			h.ID, h.KeyID, h.Lease, h.Concurrent, h.Month, h.Quota).Scan(&out.Running, &out.Documents, &out.Held, &out.Taken)
		return out, err
	}
	// SQLite's transactions begin IMMEDIATE: they are serialised.
	defer db.writeTurn()()
	err := transact(ctx, db.holds, func(tx *sql.Tx) error {
		if err := countHolds(ctx, tx, h, &out); err != nil {
			return err
		}
		if out.Taken = admits(h, out); !out.Taken {
			return nil
		}
		if h.Concurrent > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO key_requests (id, key_id, lease) VALUES (?, ?, ?)`, h.ID, h.KeyID, h.Lease); err != nil {
				return err
			}
		}
		if h.Quota > 0 {
			_, err := tx.ExecContext(ctx, `INSERT INTO key_reservations (id, key_id, month, lease) VALUES (?, ?, ?, ?)`,
				h.ID, h.KeyID, h.Month, h.Lease)
			return err
		}
		return nil
	})
	return out, err
}

// countHolds reads, in SQLite's tx, what h is checked against: the key's
// requests in progress (when it has a limit of them), and its documents in
// h.Month and the holds on them (when it has a quota), under live leases.
func countHolds(ctx context.Context, tx *sql.Tx, h quire.RequestHold, out *quire.RequestHeld) error {
	if h.Concurrent > 0 {
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM key_requests r JOIN job_leases l ON l.id = r.lease
			WHERE r.key_id = ? AND l.expires_at >= `+sqlite.nowMS, h.KeyID).Scan(&out.Running)
		if err != nil {
			return err
		}
	}
	if h.Quota == 0 {
		return nil
	}
	return tx.QueryRowContext(ctx, `SELECT
		COALESCE((SELECT documents FROM key_month_documents WHERE key_id = ? AND month = ?), 0),
		(SELECT COUNT(*) FROM key_reservations r JOIN job_leases l ON l.id = r.lease
			WHERE r.key_id = ? AND r.month = ? AND l.expires_at >= `+sqlite.nowMS+`)`,
		h.KeyID, h.Month, h.KeyID, h.Month).Scan(&out.Documents, &out.Held)
}

// admits says whether h is taken beside what held counts, as
// quire_hold_request decides on PostgreSQL.
func admits(h quire.RequestHold, held quire.RequestHeld) bool {
	return (h.Concurrent <= 0 || held.Running < h.Concurrent) && (h.Quota <= 0 || held.Documents+held.Held < h.Quota)
}

// ReleaseRequest ends the holds of request id, those it still has: as one
// of its key's requests in progress, and on its key's quota. One round
// trip on PostgreSQL.
func (db *DB) ReleaseRequest(ctx context.Context, id string) error {
	query := `WITH quota AS (DELETE FROM key_reservations WHERE id = ?) DELETE FROM key_requests WHERE id = ?`
	if db.dialect.name == "sqlite" { // whose DELETE takes no WITH: two statements in one call
		query = `DELETE FROM key_reservations WHERE id = ?; DELETE FROM key_requests WHERE id = ?`
	}
	_, err := db.holds.ExecContext(ctx, db.q(query), id, id)
	return err
}

// ForgetHolds deletes the holds of leases that expired (or whose row is
// gone): they count no more, and their instances ended. It also deletes
// the leases gone for leaseGone, as RescueJobs does on PostgreSQL: on
// SQLite, where jobs keep no lease, nothing else would.
func (db *DB) ForgetHolds(ctx context.Context) error {
	for _, table := range []string{"key_reservations", "key_requests"} {
		_, err := db.holds.ExecContext(ctx, `DELETE FROM `+table+` WHERE lease NOT IN
			(SELECT id FROM job_leases WHERE expires_at >= `+db.dialect.nowMS+`)`)
		if err != nil {
			return err
		}
	}
	_, err := db.exec(ctx, db.forgetLeases(), leaseGone.Milliseconds())
	return err
}
