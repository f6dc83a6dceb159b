package store

import (
	"context"
	"time"
)

// Hit counts n events in the fixed window of length window that contains
// now, for bucket, and returns the count so far in that window (these n
// included) and when the window ends. All instances sharing the database
// share the counters. The count only grows within a window, so concurrent
// callers each own the distinct range (hits-n, hits]: a limiter that takes
// tokens in blocks grants exactly those of its range under the limit.
func (db *DB) Hit(ctx context.Context, bucket string, now time.Time, window time.Duration, n int) (hits int, reset time.Time, err error) {
	w := window.Milliseconds()
	start := now.UnixMilli() / w * w
	err = db.queryRow(ctx, `INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?, ?, ?)
		ON CONFLICT (bucket) DO UPDATE SET
			hits = CASE WHEN rate_limits.window_start = excluded.window_start THEN rate_limits.hits + excluded.hits ELSE excluded.hits END,
			window_start = excluded.window_start
		RETURNING hits`, bucket, start, n).Scan(&hits)
	return hits, time.UnixMilli(start + w).UTC(), err
}

// DeleteStaleLimits removes counters whose window started before cutoff.
func (db *DB) DeleteStaleLimits(ctx context.Context, cutoff time.Time) error {
	_, err := db.exec(ctx, `DELETE FROM rate_limits WHERE window_start < ?`, cutoff.UnixMilli())
	return err
}
