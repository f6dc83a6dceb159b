package httpapi

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quire-dev/quire"
)

// requestInfo travels in the request context: set by the outer middleware,
// filled in by the inner ones (the route is known only after routing).
type requestInfo struct {
	id    string
	route string
	quiet bool    // a successful answer is not logged (Route.Quiet)
	probe bool    // logged at DEBUG (Route.Probe)
	srv   *Server // whose trusted proxies ClientIP and HTTPS believe
	// dialect answers the errors of a route of another API (Route.Dialect).
	dialect *Dialect
}

type infoCtx struct{}

func infoOf(ctx context.Context) *requestInfo {
	if ri, ok := ctx.Value(infoCtx{}).(*requestInfo); ok {
		return ri
	}
	return &requestInfo{}
}

// logger returns the server's logger with the request id of ctx.
func (s *Server) logger(ctx context.Context) *slog.Logger {
	return s.log.With("request_id", infoOf(ctx).id)
}

// withRequestID takes the caller's X-Request-Id when it is a sane token,
// generates one otherwise, and echoes it in the response.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Gotenberg's clients name their requests in Gotenberg-Trace
		// (internal/gotenberg).
		id := cmp.Or(r.Header.Get("X-Request-Id"), r.Header.Get("Gotenberg-Trace"))
		if !saneID(id) {
			id = newRequestID()
		}
		w.Header()["X-Request-Id"] = []string{id} // the key is canonical: Set would check it again
		ctx := context.WithValue(r.Context(), infoCtx{}, &requestInfo{id: id, srv: s})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func saneID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r)) {
			return false
		}
	}
	return true
}

// requestIDs number the requests of this process after a random prefix
// of its own: ids tell requests apart in logs and guard nothing, so they
// need not be unpredictable, and counting is cheaper than reading random
// bytes for every request.
var requestIDs = struct {
	prefix [4]byte
	n      atomic.Uint64
}{prefix: func() (b [4]byte) { rand.Read(b[:]); return b }()}

// newRequestID returns 24 hex digits: 8 of the process, 16 of the count.
func newRequestID() string {
	var raw [12]byte
	copy(raw[:4], requestIDs.prefix[:])
	binary.BigEndian.PutUint64(raw[4:], requestIDs.n.Add(1))
	return hex.EncodeToString(raw[:])
}

// recorder remembers the status and size of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// observe logs one line per request and feeds the request metrics. It logs
// the path without the query string: queries carry e-mail addresses and
// one-time codes.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		elapsed := time.Since(start)
		ri := infoOf(r.Context())
		route := ri.route
		if route == "" {
			route = "unmatched"
		}
		s.metrics.observe(route, methodLabel(r.Method), rec.status, elapsed)
		if ri.quiet && rec.status < 400 {
			return
		}
		level := slog.LevelInfo
		switch {
		case ri.probe:
			level = slog.LevelDebug
		case rec.status == http.StatusServiceUnavailable: // shedding load, or the client went away
			level = slog.LevelWarn
		case rec.status >= 500:
			level = slog.LevelError
		}
		s.logger(r.Context()).Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path,
			"route", route, "status", rec.status, "bytes", rec.bytes, "duration_ms", float64(elapsed.Microseconds())/1000)
	})
}

// methodLabel keeps the method label of the metrics to a fixed set: any
// string is a valid method, and each would be a new time series.
func methodLabel(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return m
	}
	return "OTHER"
}

// writeDeadline gives each answer Options.WriteTimeout to be written from
// its first byte: a client that does not read its answer is cut off then,
// and the memory of the answer freed, however long the work before took.
func (s *Server) writeDeadline(next http.Handler) http.Handler {
	if s.opt.WriteTimeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&deadlineWriter{ResponseWriter: w, timeout: s.opt.WriteTimeout}, r)
	})
}

// deadlineWriter sets the connection's write deadline when the answer
// starts; net/http clears it once the answer is complete.
type deadlineWriter struct {
	http.ResponseWriter
	timeout time.Duration
	started bool
}

func (d *deadlineWriter) start() {
	if !d.started {
		d.started = true
		http.NewResponseController(d.ResponseWriter).SetWriteDeadline(time.Now().Add(d.timeout))
	}
}

func (d *deadlineWriter) WriteHeader(status int) {
	d.start()
	d.ResponseWriter.WriteHeader(status)
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	d.start()
	return d.ResponseWriter.Write(b)
}

func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// recoverPanics answers a panicking handler with INTERNAL_ERROR and logs
// the stack, so one bad request never takes the process down.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler { // net/http's way to abort a response: let it through
				panic(v)
			}
			s.logger(r.Context()).Error("panic", "value", fmt.Sprint(v), "stack", string(debug.Stack()))
			s.fail(w, r, quire.Errorf(quire.CodeInternal, "Something went wrong on our side; quote the request id when reporting it."))
		}()
		next.ServeHTTP(w, r)
	})
}

// ClientIP is the address of the caller of r, a request the Server
// handles (see Server.clientIP).
func ClientIP(r *http.Request) string { return serverOf(r).clientIP(r) }

// HTTPS reports whether the caller of r, a request the Server handles,
// reached the service over TLS: here, or at a trusted proxy that says so
// in X-Forwarded-Proto.
func HTTPS(r *http.Request) bool { return serverOf(r).https(r) }

// serverOf is the Server handling r; outside one, a Server that trusts
// no proxy.
func serverOf(r *http.Request) *Server {
	if s := infoOf(r.Context()).srv; s != nil {
		return s
	}
	return &Server{}
}

func (s *Server) https(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	peer, err := netip.ParseAddr(host)
	return err == nil && s.trusted(peer) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// clientIP is the address of the caller: the peer, or, when the peer is a
// trusted proxy, the nearest address in X-Forwarded-For that is not one.
func (s *Server) clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !s.trusted(peer) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if !s.trusted(a) {
			return a.Unmap().String()
		}
	}
	return peer.Unmap().String()
}

// trusted reports whether addr is one of the trusted proxies.
func (s *Server) trusted(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range s.opt.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
