package httpapi_test

import (
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func withCORSOrigins(o ...string) envOption {
	return func(c *apitest.Config) { c.CORSOrigins = o }
}

// TestPreflightOfEveryRoute asks, as a browser does before a call with an
// Authorization header, for every /v1/ route: the preflight is answered
// before authentication, allows the headers the hosted API's clients send
// and never credentials.
func TestPreflightOfEveryRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	seen := map[string]bool{}
	for _, rt := range e.API.Routes() {
		if !strings.HasPrefix(rt.Path, "/v1/") || seen[rt.Path] {
			continue
		}
		seen[rt.Path] = true
		r := e.do("OPTIONS", rt.Path, nil, map[string]string{"Origin": "https://app.example",
			"Access-Control-Request-Method": rt.Method, "Access-Control-Request-Headers": "authorization,content-type"})
		h := r.header
		if r.status != 204 || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("OPTIONS %s = %d, Allow-Origin %q, Allow-Credentials %q", rt.Path, r.status,
				h.Get("Access-Control-Allow-Origin"), h.Get("Access-Control-Allow-Credentials"))
		}
		if !strings.Contains(h.Get("Access-Control-Allow-Methods"), rt.Method) {
			t.Errorf("OPTIONS %s: Allow-Methods %q lacks %s", rt.Path, h.Get("Access-Control-Allow-Methods"), rt.Method)
		}
		allowed := strings.ToLower(h.Get("Access-Control-Allow-Headers"))
		for _, want := range []string{"authorization", "content-type", "x-license-key", "x-request-id"} {
			if !strings.Contains(allowed, want) {
				t.Errorf("OPTIONS %s: Allow-Headers %q lacks %s", rt.Path, allowed, want)
			}
		}
	}
	for _, p := range []string{"/v1/convert", "/v1/verify", "/v1/sign", "/v1/health", "/v1/verify/key", "/v1/collect"} {
		if !seen[p] {
			t.Errorf("no route %s was preflighted", p)
		}
	}
}

// TestCORSOnEveryAnswer checks the header on successes and on errors
// (unauthenticated, unknown path, wrong method) of cross-origin paths, and
// its absence elsewhere.
func TestCORSOnEveryAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	origin := map[string]string{"Origin": "https://app.example"}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/health", 200},
		{"GET", "/v1/verify/key", 200},
		{"POST", "/v1/convert?from=docx", 401},
		{"POST", "/v1/sign", 401},
		{"POST", "/v1/verify", 400},
		{"GET", "/v1/nothing-here", 404},
		{"DELETE", "/v1/verify", 405},
		{"GET", "/openapi.json", 200},
	} {
		r := e.do(c.method, c.path, strings.NewReader("{}"), origin)
		if r.status != c.status || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s %s = %d (want %d), Allow-Origin %q", c.method, c.path, r.status, c.status, r.header.Get("Access-Control-Allow-Origin"))
		}
		if exposed := r.header.Get("Access-Control-Expose-Headers"); !strings.Contains(exposed, "X-Request-Id") || !strings.Contains(exposed, "Retry-After") {
			t.Errorf("%s %s: Expose-Headers %q", c.method, c.path, exposed)
		}
	}
	if r := e.do("GET", "/metrics", nil, origin); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("/metrics is open to other origins: %q", r.header.Get("Access-Control-Allow-Origin"))
	}
	// A preflight of a path that does not exist is not answered as one.
	if r := e.do("OPTIONS", "/v1/nothing-here", nil, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}); r.status != 404 {
		t.Errorf("preflight of an unknown path = %d", r.status)
	}
}

// TestCORSOriginList: with a list of origins, a listed origin is echoed
// with Vary: Origin; another gets no CORS header, so its browser refuses.
func TestCORSOriginList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(),
		withCORSOrigins("https://app.example", "http://localhost:3000"))
	preflight := func(origin string) response {
		return e.do("OPTIONS", "/v1/convert", nil, map[string]string{"Origin": origin,
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"})
	}
	r := preflight("http://localhost:3000")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || r.header.Get("Vary") != "Origin" {
		t.Errorf("listed origin: %d %v", r.status, r.header)
	}
	r = preflight("https://evil.example")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Headers") != "" {
		t.Errorf("unlisted origin: %d %v", r.status, r.header)
	}
	r = e.do("GET", "/v1/health", nil, map[string]string{"Origin": "https://app.example"})
	if r.header.Get("Access-Control-Allow-Origin") != "https://app.example" || r.header.Get("Vary") != "Origin" {
		t.Errorf("listed origin on GET: %v", r.header)
	}
	r = e.do("GET", "/v1/health", nil, map[string]string{"Origin": "https://evil.example"})
	if r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Vary") != "Origin" {
		t.Errorf("unlisted origin on GET: %v", r.header)
	}
}
