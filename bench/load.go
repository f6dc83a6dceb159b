package main

import (
	"context"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// request builds the i-th request of a load run.
type request func(i int64) (*http.Request, error)

// stats summarises one load run.
type stats struct {
	requests, failures int64
	elapsed            time.Duration
	p50, p95, p99      time.Duration
}

func (s stats) rate() float64 { return float64(s.requests) / s.elapsed.Seconds() }

// load sends requests from conns keep-alive connections for d and records
// every latency. A response whose status is not want counts as a failure.
func load(conns int, d time.Duration, want int, next request) stats {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var seq, failures atomic.Int64
	lat := make([][]time.Duration, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, err := next(seq.Add(1))
				if err != nil {
					panic(err)
				}
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					failures.Add(1)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				lat[c] = append(lat[c], time.Since(t0))
				if res.StatusCode != want {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	s := stats{requests: int64(len(all)), failures: failures.Load(), elapsed: time.Since(start)}
	if len(all) > 0 {
		s.p50, s.p95, s.p99 = all[len(all)/2], all[len(all)*95/100], all[len(all)*99/100]
	}
	return s
}
