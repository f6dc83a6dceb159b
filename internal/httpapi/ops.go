package httpapi

import (
	"context"
	_ "embed"
	"net/http"
	"time"

	"github.com/quire-dev/quire"
)

//go:embed openapi.json
var openAPI []byte

func (s *Server) opsRoutes() []Route {
	return []Route{
		{Method: "GET", Path: "/v1/health", Handler: s.health, Probe: true},
		{Method: "GET", Path: "/v1/health/live", Handler: s.live, Probe: true},
		{Method: "GET", Path: "/metrics", Handler: s.metrics.handler().ServeHTTP, Probe: true},
		{Method: "GET", Path: "/openapi.json", Handler: serveOpenAPI},
	}
}

// Health is the body of GET /v1/health: the hosted API's fields, and
// quire's checks beside them.
type Health struct {
	Status    string            `json:"status"` // "healthy", or "unavailable" with 503
	Timestamp string            `json:"timestamp"`
	Version   string            `json:"version"`
	Instance  Instance          `json:"instance"`
	Checks    map[string]string `json:"checks"`
	Engines   map[string]string `json:"engines,omitempty"` // engine name: its version, once known
}

// Instance describes the process answering.
type Instance struct {
	StartTime string  `json:"startTime"`
	Uptime    float64 `json:"uptime"` // seconds
}

// health is readiness: 200 when the database answers and the conversion
// engine, unless disabled, has a warm worker; otherwise 503 with the error
// body extended by the health fields, so that both load balancers and
// people reading the body understand it.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	now := time.Now()
	h := Health{Status: "healthy", Timestamp: now.UTC().Format(time.RFC3339), Version: s.deps.Version,
		Instance: Instance{StartTime: s.started.UTC().Format(time.RFC3339), Uptime: now.Sub(s.started).Seconds()},
		Checks:   map[string]string{"database": "ok", "convert": convertStatus(s.deps.Convert)}}
	var qe *quire.Error
	if !convertReady(s.deps.Convert) {
		qe = &quire.Error{Code: quire.CodeEngineBusy, Message: "The conversion engine has no warm worker: " + h.Checks["convert"] + ".",
			RetryAfter: 5 * time.Second}
	}
	if c := s.deps.Chromium; c != nil {
		st := c.Status()
		h.Checks["chromium"] = engineStatus(st, "browsers")
		if v := c.Version(); v != "" {
			h.Engines = map[string]string{"chromium": v}
		}
		if !engineReady(st) {
			qe = &quire.Error{Code: quire.CodeEngineBusy, Message: "The Chromium engine has no warm browser: " + h.Checks["chromium"] + ".",
				RetryAfter: 5 * time.Second}
		}
	}
	if err := s.deps.DB.Ping(ctx); err != nil {
		s.logger(r.Context()).Warn("health: database unreachable", "err", err)
		h.Checks["database"] = "unreachable"
		qe = &quire.Error{Code: quire.CodeUnavailable, Message: "The database is unreachable.", RetryAfter: 5 * time.Second}
	}
	if qe == nil {
		writeJSON(w, http.StatusOK, h)
		return
	}
	h.Status = "unavailable"
	w.Header().Set("Retry-After", "5")
	writeJSON(w, http.StatusServiceUnavailable, struct {
		ErrorBody
		Health
	}{s.errorBody(r, http.StatusServiceUnavailable, qe), h})
}

// live is liveness: the process answers, whatever its dependencies do.
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
}

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
