package store_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestJobBodiesMigrationKeepsThem upgrades a database with jobs stored
// before migration 0015, their bodies in their rows: a queued job still
// starts with its request, an ended one still answers its result, and
// its bodies go when it expires.
func TestJobBodiesMigrationKeepsThem(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			u := storetest.URL(t, backend)
			old := openAt(t, u, 14)
			raw := storetest.SQL(t, u)
			const columns = `INSERT INTO jobs (id, key_id, operation, status, created_at, method, target, request_header, request_body,
				result_status, result_header, result_body, expires_at) VALUES `
			for _, q := range []string{
				columns + `('q', 'k', 'convert', 'queued', 1, 'POST', '/v1/convert', '{}', 'request q', NULL, NULL, NULL, NULL)`,
				columns + `('e', 'k', 'convert', 'succeeded', 1, 'POST', '/v1/convert', '{}', 'request e', 200, '{}', 'result e', 9000000000000)`,
			} {
				if _, err := raw.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			old.Close()

			db := storetest.Open(t, u)
			_, req, ok, err := db.StartJob(ctx, "q", time.Now())
			if err != nil || !ok || string(req.Body) != "request q" || req.Target != "/v1/convert" {
				t.Errorf("queued job started: %v %v, request %q %q; want its request body", ok, err, req.Target, req.Body)
			}
			res, err := db.JobResult(ctx, "e")
			if err != nil || res.Status != 200 || !bytes.Equal(res.Body, []byte("result e")) {
				t.Errorf("ended job's result: %d %q (%v), want 200 %q", res.Status, res.Body, err, "result e")
			}
			if n, err := db.DeleteExpiredJobs(ctx, time.UnixMilli(9000000000001)); err != nil || n != 1 {
				t.Errorf("expired jobs removed: %d (%v), want 1 (the ended one)", n, err)
			}
			var left int
			if err := raw.QueryRow(`SELECT COUNT(*) FROM job_bodies WHERE job_id = 'e'`).Scan(&left); err != nil || left != 0 {
				t.Errorf("bodies of the expired job left: %d (%v), want 0", left, err)
			}
		})
	}
}
