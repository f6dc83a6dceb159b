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

// instanceLeases renews the leases of two instances, a and b, for an
// hour, and returns their ids.
func instanceLeases(t *testing.T, instances []*store.DB) []string {
	leases := []string{"instance-a", "instance-b"}
	for i, db := range instances {
		if err := db.RenewLease(ctx, leases[i], time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	return leases
}

// holdAtOnce asks n holds at once, alternately of instances 0 and 1, and
// wants exactly want of them taken: it returns the ids of those, by
// instance.
func holdAtOnce(t *testing.T, n, want int, hold func(i, n int) (quire.RequestHeld, string)) map[int][]string {
	var mu sync.Mutex
	taken := map[int][]string{}
	var refused atomic.Int64
	var wg sync.WaitGroup
	for n := range n {
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
	if got := len(taken[0]) + len(taken[1]); got != want || refused.Load() != int64(n-want) {
		t.Fatalf("%d holds taken and %d refused, want %d and %d", got, refused.Load(), want, n-want)
	}
	return taken
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
	leases := instanceLeases(t, instances)
	hold := func(i, n int) (quire.RequestHeld, string) {
		h := quire.RequestHold{ID: fmt.Sprintf("%s-%d", leases[i], n), KeyID: "k1", Lease: leases[i], Month: month, Quota: quota}
		held, err := instances[i].HoldRequest(ctx, h)
		if err != nil {
			t.Error(err)
		}
		if held.Documents+held.Held > quota {
			t.Errorf("documents %d and holds %d, over the quota", held.Documents, held.Held)
		}
		return held, h.ID
	}
	taken := holdAtOnce(t, 60, quota-used, hold)
	// Which instance took which is chance: each releases its own, and
	// then takes, in turn, 4 (a) and 5 (b).
	for i, ids := range taken {
		for _, id := range ids {
			if err := instances[i].ReleaseRequest(ctx, id); err != nil {
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
	if err := instances[1].ReleaseRequest(ctx, taken[1][0]); err != nil {
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
	if err := instances[0].ForgetHolds(ctx); err != nil {
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

// Requests of a key in progress, held at once through two handles on one
// database standing for two instances, never pass the key's limit of
// requests at once; a release frees a place; a request refused by either
// of its limits holds nothing of the other; the requests of an instance
// whose lease expired count no more and are then forgotten.
func TestConcurrencyHoldsAcrossInstances(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			u := storetest.URL(t, backend)
			instances := []*store.DB{storetest.Open(t, u), storetest.Open(t, u)}
			testConcurrencyHolds(t, u, instances)
		})
	}
}

func testConcurrencyHolds(t *testing.T, u string, instances []*store.DB) {
	const limit = 5
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	leases := instanceLeases(t, instances)
	hold := func(i int, id string, quota int64) quire.RequestHeld {
		h := quire.RequestHold{ID: id, KeyID: "k1", Lease: leases[i], Concurrent: limit, Month: quire.Month(now), Quota: quota}
		held, err := instances[i].HoldRequest(ctx, h)
		if err != nil {
			t.Error(err)
		}
		if held.Running > limit {
			t.Errorf("%d requests in progress, over the limit of %d", held.Running, limit)
		}
		return held
	}
	taken := holdAtOnce(t, 40, limit, func(i, n int) (quire.RequestHeld, string) {
		id := fmt.Sprintf("%s-%d", leases[i], n)
		return hold(i, id, 0), id
	})
	raw := storetest.SQL(t, u)
	rows := func(table, column, value string) (n int) {
		if err := raw.QueryRow(`SELECT COUNT(*) FROM ` + table + ` WHERE ` + column + ` = '` + value + `'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Refused for the key's requests in progress, a request holds nothing
	// of its quota, which had room.
	if held := hold(0, "busy", 100); held.Taken || held.Running != limit || rows("key_reservations", "id", "busy") != 0 {
		t.Errorf("a request over the limit, with a quota: %+v", held)
	}
	// A release frees a place, which a request refused by its quota does
	// not take.
	i := 0
	if len(taken[0]) == 0 {
		i = 1
	}
	if err := instances[i].ReleaseRequest(ctx, taken[i][0]); err != nil {
		t.Fatal(err)
	}
	taken[i] = taken[i][1:]
	used := quire.Charge{KeyID: "k1", Rows: []quire.APIUsageRow{{KeyID: "k1", Period: quire.Day(now),
		Operation: quire.OpSign, OperationUsage: quire.OperationUsage{Requests: 1, Documents: 1}}}}
	if _, err := instances[0].AddAPIUsage(ctx, []quire.Charge{used}); err != nil {
		t.Fatal(err)
	}
	if held := hold(0, "spent", 1); held.Taken || held.Running != limit-1 || held.Documents != 1 || rows("key_requests", "id", "spent") != 0 {
		t.Errorf("a request of a quota used up: %+v", held)
	}
	if held := hold(1, "freed", 0); !held.Taken || held.Running != limit-1 {
		t.Fatalf("a request after a release: %+v", held)
	}
	taken[1] = append(taken[1], "freed")
	// Instance b crashes: its lease expires, and its requests count no
	// more; then they are forgotten.
	if err := instances[0].RenewLease(ctx, leases[1], -time.Second); err != nil {
		t.Fatal(err)
	}
	if held := hold(0, "after-b", 0); !held.Taken || held.Running != int64(len(taken[0])) {
		t.Errorf("a request after instance b's lease expired: %+v, want taken beside instance a's %d", held, len(taken[0]))
	}
	if err := instances[0].ForgetHolds(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rows("key_requests", "lease", leases[1]); n != 0 {
		t.Errorf("%d requests of the expired lease left, want 0", n)
	}
	if n := rows("key_requests", "lease", leases[0]); n != len(taken[0])+1 {
		t.Errorf("%d requests of the live lease left, want %d", n, len(taken[0])+1)
	}
}
