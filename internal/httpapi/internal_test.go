package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire/internal/config"
)

func TestPanicAnswersTheErrorBody(t *testing.T) {
	var logs strings.Builder
	s := &Server{log: slog.New(slog.NewJSONHandler(&logs, nil)), metrics: newMetrics(prometheus.NewRegistry(), nopPinger{})}
	h := s.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	var b ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || rec.Code != 500 || b.Code != "INTERNAL_ERROR" ||
		b.RequestID == "" || b.RequestID != rec.Header().Get("X-Request-Id") {
		t.Fatalf("panic answered %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "boom") || !strings.Contains(logs.String(), b.RequestID) {
		t.Errorf("the panic is not logged with its request id: %s", logs.String())
	}
}

type nopPinger struct{}

func (nopPinger) Ping(context.Context) error { return nil }

func TestClientIP(t *testing.T) {
	var proxies config.Prefixes
	proxies.Set("10.0.0.0/8,::1/128")
	s := &Server{opt: Options{TrustedProxies: proxies}}
	for _, c := range []struct{ remote, xff, want string }{
		{"203.0.113.7:5000", "198.51.100.1", "203.0.113.7"},                       // untrusted peer: its header is ignored
		{"10.1.2.3:5000", "198.51.100.1", "198.51.100.1"},                         // trusted proxy
		{"10.1.2.3:5000", "198.51.100.9, 198.51.100.1, 10.0.0.5", "198.51.100.1"}, // nearest untrusted hop
		{"[::1]:5000", "2001:db8::1", "2001:db8::1"},
		{"10.1.2.3:5000", "", "10.1.2.3"},
		{"10.1.2.3:5000", "garbage", "10.1.2.3"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := s.clientIP(r); got != c.want {
			t.Errorf("%s via %q: %s, want %s", c.remote, c.xff, got, c.want)
		}
	}
}
