package httpapi_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/httpapi"
)

// healthOf reads GET /v1/health: its status, Retry-After and body.
func healthOf(t *testing.T, f *fakes) (response, httpapi.Health) {
	t.Helper()
	r := f.serve(t).send("GET", "/v1/health", nil)
	var h httpapi.Health
	r.json(t, &h)
	return r, h
}

// TestFakeHealthReady: with the database answering and each engine warm,
// /v1/health is 200 in the hosted API's shape, with quire's checks, the
// engines' versions and the TSAs beside it.
func TestFakeHealthReady(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.convert, f.chromium = readyEngine("25.2.3.2"), readyEngine("HeadlessChrome/156")
	r, h := healthOf(t, f)
	if r.status != 200 || h.Status != "healthy" || h.Version != "fake" || h.Timestamp == "" || h.Instance.StartTime == "" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	want := map[string]string{"database": "ok", "convert": "1/1 workers ready, 0 busy, 0 queued", "chromium": "1/1 browsers ready, 0 busy, 0 queued"}
	for k, v := range want {
		if h.Checks[k] != v {
			t.Errorf("checks.%s = %q, want %q", k, h.Checks[k], v)
		}
	}
	if h.Engines["libreoffice"] != "25.2.3.2" || h.Engines["chromium"] != "HeadlessChrome/156" || len(h.TSA) != 1 || h.TSA[0].State != "ok" {
		t.Errorf("engines %v, tsa %+v", h.Engines, h.TSA)
	}
	f.convert, f.chromium = nil, nil
	if r, h := healthOf(t, f); r.status != 200 || h.Checks["convert"] != "disabled" || h.Checks["chromium"] != "" {
		t.Errorf("engines off: %d %s", r.status, r.body)
	}
}

// TestFakeHealthUnavailable: readiness fails with 503, Retry-After and
// the error body beside the health fields (docs/api.md "Operations
// endpoints"): SERVICE_UNAVAILABLE while the database does not answer,
// ENGINE_UNAVAILABLE while an engine has no warm process (its last error
// told); liveness answers regardless.
func TestFakeHealthUnavailable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		set    func(*fakes)
		code   string
		check  string
		saying string
	}{
		{"database", func(f *fakes) { f.db.err = errDown }, quire.CodeUnavailable, "database", "unreachable"},
		{"convert", func(f *fakes) {
			f.convert = &fakeEngine{st: engine.Status{Workers: 2, Starting: 2, LastError: "soffice exited"}}
		}, quire.CodeEngineBusy, "convert", "0/2 workers ready, 0 busy, 0 queued; last error: soffice exited"},
		{"chromium", func(f *fakes) { f.chromium = &fakeEngine{st: engine.Status{Workers: 1}} }, quire.CodeEngineBusy, "chromium", "0/1 browsers ready"},
	} {
		f := newFakes()
		c.set(f)
		r, h := healthOf(t, f)
		b := r.errorBody(t, 503, c.code)
		if r.header.Get("Retry-After") != "5" || h.Status != "unavailable" || !strings.HasPrefix(h.Checks[c.check], c.saying) {
			t.Errorf("%s: %v %s", c.name, r.header, r.body)
		}
		if c.check != "database" && !strings.Contains(b.Message, c.saying) {
			t.Errorf("%s: message %q does not tell the engine's state", c.name, b.Message)
		}
		live := f.serve(t).send("GET", "/v1/health/live", nil)
		if live.status != 200 || strings.TrimSpace(string(live.body)) != `{"status":"alive"}` {
			t.Errorf("%s: liveness %d %s", c.name, live.status, live.body)
		}
	}
}

// TestFakeMetrics: /metrics counts the answers by route pattern, method
// (an unknown method as OTHER) and status, unmatched paths as
// "unmatched", and tells whether the database answers.
func TestFakeMetrics(t *testing.T) {
	t.Parallel()
	f := newFakes()
	a := f.serve(t)
	fakeDo(t, a, "POST", "/v1/sign", goodKey, signBody(inline([]byte("%PDF-"))))
	a.send("GET", "/v1/ca/x/crl", nil)
	a.send("GET", "/nowhere", nil)
	a.send("BREW", "/v1/health/live", nil)
	m := string(a.send("GET", "/metrics", nil).body)
	for _, want := range []string{
		`quire_http_requests_total{method="POST",route="/v1/sign",status="200"} 1`,
		`quire_http_requests_total{method="GET",route="/v1/ca/{id}/crl",status="404"} 1`,
		`quire_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`quire_http_requests_total{method="OTHER",route="unmatched",status="405"} 1`,
		`quire_http_request_duration_seconds_count{method="POST",route="/v1/sign"} 1`,
		"quire_database_up 1",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	f.db.err = errDown
	if m := string(f.serve(t).send("GET", "/metrics", nil).body); !strings.Contains(m, "quire_database_up 0") {
		t.Error("/metrics: the database is down, quire_database_up is not 0")
	}
}

// TestFakeRequestIDAndHeaders: every answer, errors included, has an
// X-Request-Id, the caller's own when it is a sane token (docs/api.md
// "Errors"), else one of quire's; JSON answers say so and forbid sniffing.
func TestFakeRequestIDAndHeaders(t *testing.T) {
	t.Parallel()
	a := newFakes().serve(t)
	if r := a.send("GET", "/v1/nowhere", nil, "X-Request-Id", "req-1.a:b_c"); r.errorBody(t, 404, quire.CodeNotFound).RequestID != "req-1.a:b_c" {
		t.Errorf("a sane id is not kept: %s", r.body)
	}
	generated := regexp.MustCompile(`^[0-9a-f]{24}$`)
	for _, id := range []string{"", "has space", strings.Repeat("x", 129), "é"} {
		r := a.send("GET", "/v1/health/live", nil, "X-Request-Id", id)
		if got := r.header.Get("X-Request-Id"); !generated.MatchString(got) {
			t.Errorf("id %q: answered %q, want one of quire's", id, got)
		}
		if r.header.Get("Content-Type") != "application/json; charset=utf-8" || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("JSON headers %v", r.header)
		}
	}
	if r := a.send("GET", "/openapi.json", nil); r.status != 200 || r.header.Get("Content-Type") != "application/json" || !strings.Contains(string(r.body), `"openapi"`) {
		t.Errorf("/openapi.json: %d %v", r.status, r.header)
	}
}

// TestFakeCORS: a preflight of a known /v1/ path is answered before
// authentication with the methods served there; one of an unknown path
// gets its 404; with a list of origins, only those are allowed, and the
// answer varies by Origin.
func TestFakeCORS(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.opt.CORSOrigins = []string{"https://app.example"}
	a := f.serve(t)
	preflight := func(path, origin string) response {
		return a.send("OPTIONS", path, nil, "Origin", origin, "Access-Control-Request-Method", "POST")
	}
	r := preflight("/v1/sign", "https://app.example")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" || r.header.Get("Access-Control-Allow-Methods") != "POST, OPTIONS" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") || r.header.Get("Vary") != "Origin" {
		t.Errorf("allowed origin: %d %v", r.status, r.header)
	}
	r = preflight("/v1/sign", "https://evil.example")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("another origin: %d %v", r.status, r.header)
	}
	if r := preflight("/v1/nothing", "https://app.example"); r.errorBody(t, 404, quire.CodeNotFound).Code == "" || r.header.Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("unknown path: %v", r.header)
	}
	r = fakeDo(t, a, "POST", "/v1/sign", "", `{}`)
	if r.errorBody(t, 401, quire.CodeAuthentication); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("no Origin sent, an origin allowed: %v", r.header)
	}
}

// TestFakePanic: a handler that panics gets 500 INTERNAL_ERROR
// in the error body, logged with its request id, and the server goes on.
func TestFakePanic(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.logs = &syncBuffer{}
	f.foreign = []httpapi.Route{{Method: "GET", Path: "/boom", Handler: func(http.ResponseWriter, *http.Request) { panic("boom at the fake") }}}
	a := f.serve(t)
	b := a.send("GET", "/boom", nil).errorBody(t, 500, quire.CodeInternal)
	if logs := f.logs.String(); !strings.Contains(logs, "boom at the fake") || !strings.Contains(logs, b.RequestID) {
		t.Errorf("the panic is not logged with its request id: %s", logs)
	}
	if r := a.send("GET", "/v1/health/live", nil); r.status != 200 {
		t.Errorf("after a panic: %d", r.status)
	}
}

// TestFakeClientAddress: ClientIP and HTTPS believe X-Forwarded-For and
// X-Forwarded-Proto only from a trusted proxy, and then take the nearest
// address that is not one.
func TestFakeClientAddress(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.foreign = []httpapi.Route{{Method: "GET", Path: "/whoami", Handler: func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %v", httpapi.ClientIP(r), httpapi.HTTPS(r))
	}}}
	whoami := func(f *fakes, header ...string) string {
		return string(f.serve(t).send("GET", "/whoami", nil, header...).body)
	}
	forwarded := []string{"X-Forwarded-For", "198.51.100.7, 10.0.0.2", "X-Forwarded-Proto", "https"}
	if got := whoami(f, forwarded...); got != "127.0.0.1 false" {
		t.Errorf("no trusted proxy: %q", got)
	}
	f.opt.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}
	if got := whoami(f, forwarded...); got != "198.51.100.7 true" {
		t.Errorf("behind trusted proxies: %q", got)
	}
	if got := whoami(f, "X-Forwarded-For", "not-an-address, 10.0.0.3"); got != "127.0.0.1 false" {
		t.Errorf("a forwarded list of proxies and garbage: %q", got)
	}
}
