package store

import (
	"context"
	"database/sql"

	"github.com/quire-dev/quire"
)

// HoldQuota takes one document of h.KeyID's quota for request h.ID while
// it is in progress, unless the month's documents and the holds of the
// key's requests in progress under live leases (every instance's) use it
// all: the check and the hold are one atomic step, serialised per key, in
// one round trip on PostgreSQL (quire_reserve_quota, migration 0019).
// ReleaseQuota, or the commit of the request's charge, ends the hold.
//
// A hold need not survive a crash of the database (the charge is checked
// again when counted): it is written without waiting for the disk
// (db.holds), and costs a request no more than the round trip.
func (db *DB) HoldQuota(ctx context.Context, h quire.QuotaHold) (quire.QuotaHeld, error) {
	var out quire.QuotaHeld
	if db.dialect.name != "sqlite" {
		err := db.queryRow(ctx, `SELECT documents, held, reserved FROM quire_reserve_quota(?, ?, ?, ?, ?)`,
			h.ID, h.KeyID, h.Month, h.Lease, h.Quota).Scan(&out.Documents, &out.Held, &out.Taken)
		return out, err
	}
	// SQLite's transactions begin IMMEDIATE: they are serialised.
	defer db.writeTurn()()
	err := transact(ctx, db.holds, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT
			COALESCE((SELECT documents FROM key_month_documents WHERE key_id = ? AND month = ?), 0),
			(SELECT COUNT(*) FROM key_reservations r JOIN job_leases l ON l.id = r.lease
				WHERE r.key_id = ? AND r.month = ? AND l.expires_at >= `+db.dialect.nowMS+`)`,
			h.KeyID, h.Month, h.KeyID, h.Month).Scan(&out.Documents, &out.Held)
		if out.Taken = out.Documents+out.Held < h.Quota; err != nil || !out.Taken {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO key_reservations (id, key_id, month, lease) VALUES (?, ?, ?, ?)`,
			h.ID, h.KeyID, h.Month, h.Lease)
		return err
	})
	return out, err
}

// ReleaseQuota ends the hold of request id on its key's quota, if it
// still holds it.
func (db *DB) ReleaseQuota(ctx context.Context, id string) error {
	_, err := db.holds.ExecContext(ctx, db.q(`DELETE FROM key_reservations WHERE id = ?`), id)
	return err
}

// ForgetQuotaHolds deletes the holds of leases that expired (or whose
// row is gone): they count no more, and their instances ended. It also
// deletes the leases gone for leaseGone, as RescueJobs does on PostgreSQL:
// on SQLite, where jobs keep no lease, nothing else would.
func (db *DB) ForgetQuotaHolds(ctx context.Context) error {
	_, err := db.holds.ExecContext(ctx, `DELETE FROM key_reservations WHERE lease NOT IN
		(SELECT id FROM job_leases WHERE expires_at >= `+db.dialect.nowMS+`)`)
	if err == nil {
		_, err = db.exec(ctx, db.forgetLeases(), leaseGone.Milliseconds())
	}
	return err
}
