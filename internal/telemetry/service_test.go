package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
	"github.com/quire-dev/quire/internal/telemetry/telemetrytest"
)

// poisoned fails every write that holds the document "POISON": a stand-in
// for a row the database refuses, which validation makes impossible to
// send for real.
type poisoned struct{ *store.DB }

func (p poisoned) RecordOpens(ctx context.Context, events []quire.OpenEvent) error {
	for _, e := range events {
		if e.DocumentID == "POISON" {
			return errors.New("refused")
		}
	}
	return p.DB.RecordOpens(ctx, events)
}

func testOptions() Options {
	return Options{QueueLength: 8, MaxBatch: 100, CommitTimeout: 5 * time.Second, Retention: time.Hour,
		MetadataBytes: 256, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func TestFailedBatchIsRetriedRequestByRequest(t *testing.T) {
	db := storetest.Open(t, storetest.URL(t, "sqlite"))
	s := New(poisoned{db}, testOptions())
	defer s.Close()
	good := &job{events: []quire.OpenEvent{{LicenseKey: "k", DocumentID: "GOOD", ReceivedAt: now}}, done: make(chan error, 1)}
	bad := &job{events: []quire.OpenEvent{{LicenseKey: "k", DocumentID: "POISON", ReceivedAt: now}}, done: make(chan error, 1)}
	if n := s.commit([]*job{good, bad}); n != 1 {
		t.Errorf("commit = %d events committed, want 1", n)
	}
	if err := <-good.done; err != nil {
		t.Errorf("the good request failed with the poisoned one: %v", err)
	}
	if err := <-bad.done; quire.ErrorCode(err) != quire.CodeUnavailable {
		t.Errorf("the poisoned request: %v, want SERVICE_UNAVAILABLE", err)
	}
	rows, _ := db.Usage(context.Background(), 0, 1<<40, false, nil)
	if len(rows) != 1 || rows[0].Opens != 1 {
		t.Errorf("stored %+v, want the good open only", rows)
	}
}

func TestCloseCommitsAndCountsWhatIsQueued(t *testing.T) {
	u := storetest.URL(t, "sqlite")
	g := &gated{DB: storetest.Open(t, u), entered: make(chan struct{}), open: make(chan struct{}), sizes: make(chan int, 10)}
	s := New(g, testOptions())
	errs := make(chan error, 5)
	for i := 0; i < 5; i++ {
		go func() {
			errs <- s.record(context.Background(), []quire.OpenEvent{{LicenseKey: "k", DocumentID: string(rune('A' + i)), ReceivedAt: now}})
		}()
	}
	<-g.entered // the first commit is held: the others queue behind it
	waitFor(t, "the five requests in the held commit or queued", func() bool { return int(g.first.Load())+len(s.queue) == 5 })
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	waitFor(t, "Close has begun", func() bool {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.closed
	})
	g.open <- struct{}{}
	<-closed
	for i := 0; i < 5; i++ {
		if err := <-errs; err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	var counted, pending int
	raw := storetest.SQL(t, u)
	if err := raw.QueryRow(`SELECT COUNT(*) FROM documents`).Scan(&counted); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow(`SELECT COUNT(*) FROM telemetry_events WHERE id > (SELECT event_id FROM telemetry_folded)`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if counted != 5 || pending != 0 {
		t.Errorf("after Close: %d documents counted, %d opens pending; want 5 and 0", counted, pending)
	}
	if err := s.record(context.Background(), []quire.OpenEvent{{LicenseKey: "k", DocumentID: "late", ReceivedAt: now}}); !errors.Is(err, Busy) {
		t.Errorf("after Close: %v, want Busy", err)
	}
}

// counting counts the commits that reach the store.
type counting struct {
	*store.DB
	commits atomic.Int32
}

func (c *counting) RecordOpens(ctx context.Context, events []quire.OpenEvent) error {
	c.commits.Add(1)
	return c.DB.RecordOpens(ctx, events)
}

// TestGatherYieldsToRequestsBeingRead runs three requests at once on one
// processor: the first wakes the writer before the others have run, and
// the writer, yielding before it commits, lets them join its batch. The
// scheduler now and then runs the writer first anyway (it looks at its
// global queue every 61st time), so the test asks for one commit in most
// of ten rounds; without the yield, every round takes two.
func TestGatherYieldsToRequestsBeingRead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	single := 0
	for range 10 {
		st := &counting{DB: storetest.Open(t, storetest.URL(t, "sqlite"))}
		s := New(st, testOptions())
		start, errs := make(chan struct{}), make(chan error, 3)
		for i := range 3 {
			go func() {
				<-start
				errs <- s.record(context.Background(), []quire.OpenEvent{{LicenseKey: "k", DocumentID: fmt.Sprint(i), ReceivedAt: now}})
			}()
		}
		close(start)
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		if st.commits.Load() == 1 {
			single++
		}
	}
	if single < 7 {
		t.Errorf("3 requests arriving together shared one commit in %d of 10 rounds, want at least 7", single)
	}
}

// gated holds its first commit until open is closed, and records the
// size of every commit.
type gated struct {
	*store.DB
	entered, open chan struct{}
	sizes         chan int
	held          atomic.Bool
	first         atomic.Int32 // the size of the commit held
}

func (g *gated) RecordOpens(ctx context.Context, events []quire.OpenEvent) error {
	if g.held.CompareAndSwap(false, true) { // the first commit, whenever the test gets to wait for it
		g.first.Store(int32(len(events)))
		g.entered <- struct{}{}
		<-g.open
	}
	g.sizes <- len(events)
	return g.DB.RecordOpens(ctx, events)
}

// TestGatherWaitsForTheClientsItAnswered makes the writer answer two
// requests in one commit, then sends three requests 50 ms apart: the
// writer, expecting both clients back, keeps the first waiting for them,
// and commits the three at once. Without the wait, the first would be
// committed alone.
func TestGatherWaitsForTheClientsItAnswered(t *testing.T) {
	g := &gated{DB: storetest.Open(t, storetest.URL(t, "sqlite")), entered: make(chan struct{}), open: make(chan struct{}), sizes: make(chan int, 10)}
	opt := testOptions()
	opt.GatherWait = 2 * time.Second // far longer than the 50 ms between the requests
	s := New(g, opt)
	defer s.Close()
	errs := make(chan error, 6)
	send := func(id string) {
		go func() {
			errs <- s.record(context.Background(), []quire.OpenEvent{{LicenseKey: "k", DocumentID: id, ReceivedAt: now}})
		}()
	}
	send("A")
	<-g.entered // A's commit is held: B and C queue behind it
	send("B")
	send("C")
	waitFor(t, "B and C queued", func() bool { return len(s.queue) == 2 })
	g.open <- struct{}{}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if a, bc := <-g.sizes, <-g.sizes; a != 1 || bc != 2 {
		t.Fatalf("commits of %d and %d events, want 1 (A, its lone client not awaited) then 2 (B and C)", a, bc)
	}
	for _, id := range []string{"D", "E", "F"} {
		send(id)
		time.Sleep(50 * time.Millisecond) // clients 50 ms apart: the behaviour under test
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := <-g.sizes; n != 3 {
		t.Errorf("D, E and F, 50 ms apart, were committed %d at a time after a commit of 2, want 3 at once", n)
	}
}

// TestHostListChangeAppliesWithin5s runs two instances on one database: a
// host list set on one applies on the other to the opens it receives 5 s
// later (the default refresh, not shortened), and opens received before
// the change keep the classification they got.
func TestHostListChangeAppliesWithin5s(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a, b := New(db, testOptions()), New(db, testOptions())
		defer a.Close()
		defer b.Close()
		l, err := a.CreateLicense(ctx, "Acme", "billing@acme.example", "")
		if err != nil {
			t.Fatal(err)
		}
		open := func(s *Service, id, origin string) {
			t.Helper()
			req := Request{LicenseKey: l.Key}
			if err := json.Unmarshal([]byte(telemetrytest.Open2x(&id, origin)), &req); err != nil {
				t.Fatal(err)
			}
			if err := s.Collect(ctx, &req); err != nil {
				t.Fatal(err)
			}
		}
		open(b, "before", "https://evil.example") // no list yet: any host is the customer's
		if err := a.SetLicenseHosts(ctx, l.Key, "docs.acme.example"); err != nil {
			t.Fatal(err)
		}
		changed := time.Now()
		open(a, "at-once", "https://evil.example")           // the instance that changed it applies it at once
		time.Sleep(time.Until(changed.Add(5 * time.Second))) // the 5 s of the refresh, not shortened, are the behaviour under test
		open(b, "after", "https://evil.example")
		open(b, "own", "https://docs.acme.example")

		rep, err := b.Report(ctx, UsageQuery{From: now.AddDate(-1, 0, 0), To: time.Now().AddDate(1, 0, 0), Keys: []string{l.Key}})
		if err != nil {
			t.Fatal(err)
		}
		var got PeriodUsage
		for _, p := range rep.Licenses[0].Periods {
			got.Opens, got.OtherHostOpens, got.NewDocuments = got.Opens+p.Opens, got.OtherHostOpens+p.OtherHostOpens, got.NewDocuments+p.NewDocuments
		}
		if got.Opens != 4 || got.OtherHostOpens != 2 || got.NewDocuments != 2 {
			t.Errorf("opens %d, other-host opens %d, new documents %d; want 4, 2 (at-once, after) and 2 (before, own)",
				got.Opens, got.OtherHostOpens, got.NewDocuments)
		}
	})
}

// waitFor polls cond until it holds, or fails the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(time.Minute); !cond(); <-tick.C {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}
