package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestExclusiveKeepsInstancesApart runs Exclusive sections from two
// handles of one database, as two instances would: never two at once.
func TestExclusiveKeepsInstancesApart(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			u := storetest.URL(t, backend)
			dbs := []interface {
				Exclusive(context.Context, func() error) error
			}{storetest.Open(t, u), storetest.Open(t, u)}
			var inside, overlaps, runs atomic.Int32
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					err := dbs[i%2].Exclusive(context.Background(), func() error {
						if inside.Add(1) > 1 {
							overlaps.Add(1)
						}
						time.Sleep(5 * time.Millisecond) // a section that lasts, as real ones do: the behaviour under test (another must not enter meanwhile)
						inside.Add(-1)
						runs.Add(1)
						return nil
					})
					if err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if runs.Load() != 8 || overlaps.Load() != 0 {
				t.Errorf("%d sections ran, %d overlapped", runs.Load(), overlaps.Load())
			}
		})
	}
}
