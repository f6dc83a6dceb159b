package store_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// Holds on a key's quota taken at once through two handles on one
// database, standing for two instances, never pass the quota with the
// month's documents; a charge ends its request's hold in its commit, a
// release ends it uncounted, and the holds of an instance whose lease
// expired count no more and are then forgotten.
func TestQuotaHoldsAcrossInstances(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			u := storetest.URL(t, backend)
			instances := []*store.DB{storetest.Open(t, u), storetest.Open(t, u)}
			testQuotaHolds(t, u, instances)
		})
	}
}

func testQuotaHolds(t *testing.T, u string, instances []*store.DB) {
	const quota, used = 12, 3
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	month := quire.Month(now)
	charge := func(hold string) quire.Charge {
		return quire.Charge{KeyID: "k1", Quota: quota, Hold: hold, Rows: []quire.APIUsageRow{{KeyID: "k1", Period: quire.Day(now),
			Operation: quire.OpSign, OperationUsage: quire.OperationUsage{Requests: 1, Documents: 1}}}}
	}
	if _, err := instances[0].AddAPIUsage(ctx, []quire.Charge{charge(""), charge(""), charge("")}); err != nil {
		t.Fatal(err)
	}
	leases := []string{"instance-a", "instance-b"}
	for i, db := range instances {
		if err := db.RenewLease(ctx, leases[i], time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	hold := func(i, n int) (quire.QuotaHeld, string) {
		h := quire.QuotaHold{ID: fmt.Sprintf("%s-%d", leases[i], n), KeyID: "k1", Lease: leases[i], Month: month, Quota: quota}
		held, err := instances[i].HoldQuota(ctx, h)
		if err != nil {
			t.Error(err)
		}
		if held.Documents+held.Held > quota {
			t.Errorf("documents %d and holds %d, over the quota", held.Documents, held.Held)
		}
		return held, h.ID
	}
	var mu sync.Mutex
	taken := map[int][]string{}
	var refused atomic.Int64
	var wg sync.WaitGroup
	for n := range 60 {
		wg.Go(func() {
			held, id := hold(n%2, n)
			if !held.Taken {
				refused.Add(1)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			taken[n%2] = append(taken[n%2], id)
		})
	}
	wg.Wait()
	if got := len(taken[0]) + len(taken[1]); got != quota-used || refused.Load() != 60-(quota-used) {
		t.Fatalf("%d holds taken and %d refused, want %d and %d", got, refused.Load(), quota-used, 60-(quota-used))
	}
	// Which instance took which is chance: each releases its own, and
	// then takes, in turn, 4 (a) and 5 (b).
	for i, ids := range taken {
		for _, id := range ids {
			if err := instances[i].ReleaseQuota(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		taken[i] = nil
	}
	for n := range quota - used {
		held, id := hold(n%2, 200+n)
		if !held.Taken {
			t.Fatalf("hold %d after the releases: %+v", n, held)
		}
		taken[n%2] = append(taken[n%2], id)
	}
	// Instance a counts the answers of its requests, each ending its hold:
	// the quota is still held whole, by documents and instance b's holds.
	var charges []quire.Charge
	for _, id := range taken[0] {
		charges = append(charges, charge(id))
	}
	if res, err := instances[0].AddAPIUsage(ctx, charges); err != nil || res[len(res)-1].MonthDocuments != used+int64(len(taken[0])) {
		t.Fatalf("charges of the holds: %+v, %v", res, err)
	}
	if held, _ := hold(0, 100); held.Taken || held.Held != int64(len(taken[1])) {
		t.Fatalf("a hold with the quota held whole: %+v", held)
	}
	// Instance b releases one of its requests uncounted: one more may go.
	if err := instances[1].ReleaseQuota(ctx, taken[1][0]); err != nil {
		t.Fatal(err)
	}
	if held, _ := hold(0, 101); !held.Taken {
		t.Fatalf("a hold after a release: %+v", held)
	}
	// Instance b crashes: its lease expires, and its holds count no more.
	if err := instances[0].RenewLease(ctx, leases[1], -time.Second); err != nil {
		t.Fatal(err)
	}
	if held, _ := hold(0, 102); !held.Taken || held.Held != 1 {
		t.Fatalf("a hold after instance b's lease expired: %+v, want taken beside instance a's one hold", held)
	}
	if err := instances[0].RenewLease(ctx, "gone-for-days", -48*time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := instances[0].ForgetQuotaHolds(ctx); err != nil {
		t.Fatal(err)
	}
	var holds, left int
	raw := storetest.SQL(t, u)
	if err := raw.QueryRow(`SELECT COUNT(*) FROM key_reservations WHERE lease = 'instance-b'`).Scan(&holds); err != nil || holds != 0 {
		t.Errorf("%d holds of the expired lease left (%v), want 0", holds, err)
	}
	if err := raw.QueryRow(`SELECT COUNT(*) FROM job_leases WHERE id IN ('instance-b', 'gone-for-days')`).Scan(&left); err != nil || left != 1 {
		t.Errorf("%d of the lease expired now and the one gone for days left (%v), want the first only", left, err)
	}
}
