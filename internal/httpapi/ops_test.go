package httpapi_test

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func TestErrorContract(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())

	e.get("/v1/nope").errorBody(t, 404, "NOT_FOUND")
	r := e.do("DELETE", "/v1/health", nil, nil)
	r.errorBody(t, 405, "METHOD_NOT_ALLOWED")
	if !strings.Contains(r.header.Get("Allow"), "GET") {
		t.Errorf("Allow = %q", r.header.Get("Allow"))
	}
	e.do("GET", "/v1/health", strings.NewReader(strings.Repeat("x", 2048)), nil).errorBody(t, 413, "PAYLOAD_TOO_LARGE")
}

func TestRequestID(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	r := e.do("GET", "/v1/nope", nil, map[string]string{"X-Request-Id": "trace-42.a_b:c"})
	if b := r.errorBody(t, 404, "NOT_FOUND"); b.RequestID != "trace-42.a_b:c" {
		t.Errorf("requestId %q, want the caller's", b.RequestID)
	}
	r = e.do("GET", "/v1/health", nil, map[string]string{"X-Request-Id": "bad id\twith spaces"})
	if id := r.header.Get("X-Request-Id"); len(id) != 24 {
		t.Errorf("X-Request-Id %q, want a generated one in place of an unsafe value", id)
	}
	if !strings.Contains(e.Logs.String(), `"request_id":"trace-42.a_b:c"`) {
		t.Error("the request's log line lacks its id")
	}
}

func TestHealth(t *testing.T) {
	for _, b := range storetest.Backends {
		t.Run(b, func(t *testing.T) {
			db := storetest.Open(t, storetest.URL(t, b))
			e := newEnv(t, db, unlimited())
			var h httpapi.Health
			r := e.get("/v1/health")
			r.json(t, &h)
			if _, err := time.Parse(time.RFC3339, h.Timestamp); r.status != 200 || h.Status != "healthy" || h.Version != "test" || err != nil {
				t.Fatalf("health = %d %+v", r.status, h)
			}
			if start, err := time.Parse(time.RFC3339, h.Instance.StartTime); err != nil || time.Since(start) > time.Minute || h.Instance.Uptime < 0 {
				t.Errorf("instance = %+v", h.Instance)
			}
			if h.Checks["database"] != "ok" || h.Checks["convert"] != "disabled" {
				t.Errorf("checks = %v", h.Checks)
			}
			e.get("/metrics")
			for _, line := range strings.Split(e.Logs.String(), "\n") {
				if strings.Contains(line, `"msg":"request"`) && !strings.Contains(line, `"level":"DEBUG"`) {
					t.Errorf("a probe is logged above DEBUG: %s", line)
				}
			}
			db.Close() // the database is now unreachable
			r = e.get("/v1/health")
			r.errorBody(t, 503, "SERVICE_UNAVAILABLE")
			r.json(t, &h)
			if h.Status != "unavailable" || h.Checks["database"] != "unreachable" || r.header.Get("Retry-After") == "" {
				t.Errorf("health when down = %+v", h)
			}
			if r := e.get("/v1/health/live"); r.status != 200 {
				t.Errorf("live with the database down = %d %s", r.status, r.body)
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	e.get("/v1/health")
	e.get("/v1/nope")
	e.do("FOO1", "/v1/health", nil, nil)
	body := string(e.get("/metrics").body)
	for _, want := range []string{
		`quire_http_requests_total{method="GET",route="/v1/health",status="200"} 1`,
		`quire_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`quire_http_request_duration_seconds_bucket{method="GET",route="/v1/health",le="0.005"}`,
		"quire_database_up 1",
		`quire_http_requests_total{method="OTHER",route="unmatched",status="405"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestOpenAPIMatchesRoutes keeps /openapi.json true: every route is
// documented and every documented operation is routed.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withJobs(1))
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	e.get("/openapi.json").json(t, &doc)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	var documented, routed []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method != "parameters" {
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	for _, rt := range e.API.Routes() {
		if !rt.Page && rt.Dialect == nil {
			routed = append(routed, rt.Method+" "+strings.TrimSuffix(rt.Path, "{$}"))
		}
	}
	sort.Strings(documented)
	sort.Strings(routed)
	if strings.Join(documented, "\n") != strings.Join(routed, "\n") {
		t.Errorf("documented:\n%s\nrouted:\n%s", strings.Join(documented, "\n"), strings.Join(routed, "\n"))
	}
	raw, _ := os.ReadFile("openapi.json")
	if !json.Valid(raw) {
		t.Error("openapi.json is not valid JSON")
	}
}
