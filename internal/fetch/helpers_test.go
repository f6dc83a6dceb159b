package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server is an httptest server on loopback that counts the connections it
// accepts, to prove that refused downloads never reached it.
type server struct {
	*httptest.Server
	addr    netip.AddrPort
	accepts atomic.Int64
}

func newServer(t *testing.T, h http.Handler) *server {
	t.Helper()
	s := &server{Server: httptest.NewUnstartedServer(h)}
	s.Listener = countingListener{s.Listener, &s.accepts}
	s.Start()
	t.Cleanup(s.Close)
	s.addr = netip.MustParseAddrPort(s.Listener.Addr().String())
	return s
}

// assertUntouched fails t if s accepted any connection.
func (s *server) assertUntouched(t *testing.T) {
	t.Helper()
	if n := s.accepts.Load(); n != 0 {
		t.Errorf("server accepted %d connections, want none", n)
	}
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// dialLog replaces Fetcher.dial: it records every address the Fetcher tries
// to connect to, connects to stand-in[addr] instead when there is one (to
// let a loopback server play a public host), and refuses to connect to
// anything but loopback, so that no test can send traffic elsewhere even
// when the code under test is wrong.
type dialLog struct {
	mu       sync.Mutex
	attempts []string
	standIn  map[string]string
}

func (d *dialLog) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.attempts = append(d.attempts, addr)
	d.mu.Unlock()
	if to, ok := d.standIn[addr]; ok {
		addr = to
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
		return nil, fmt.Errorf("test refuses to connect to %s", addr)
	}
	var dialer net.Dialer
	return dialer.DialContext(ctx, network, addr)
}

func (d *dialLog) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.attempts)
}

// newFetcher returns a Fetcher whose connections go through a dialLog
// with the given stand-ins.
func newFetcher(o Options, standIn map[string]string) (*Fetcher, *dialLog) {
	f := New(o)
	log := &dialLog{standIn: standIn}
	f.dial = log.dial
	return f, log
}

// onlyPublic makes addr the one address f treats as public.
func onlyPublic(f *Fetcher, addr netip.AddrPort) {
	f.allow = func(ap netip.AddrPort) bool { return ap == addr }
}

func body(s string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, s) }
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
}

// errGuard ends a test whose code under test would otherwise hang.
var errGuard = errors.New("the test's guard ended the call: the code under test did not")

// guarded returns a context that a minute from now is cancelled with
// errGuard: it does not time the code under test (whose own bounds are far
// shorter), it ends a test that would hang if they were gone.
func guarded(t *testing.T) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	timer := time.AfterFunc(time.Minute, func() { cancel(errGuard) })
	t.Cleanup(func() {
		timer.Stop()
		cancel(nil)
	})
	return ctx
}
