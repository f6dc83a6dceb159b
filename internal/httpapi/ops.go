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
		{Method: "GET", Path: "/v1/health", Handler: s.health},
		{Method: "GET", Path: "/metrics", Handler: s.metrics.handler().ServeHTTP},
		{Method: "GET", Path: "/openapi.json", Handler: serveOpenAPI},
	}
}

// Health is the body of GET /v1/health.
type Health struct {
	Status    string            `json:"status"`
	Timestamp string            `json:"timestamp"`
	Version   string            `json:"version"`
	Checks    map[string]string `json:"checks"`
}

// health answers 200 when every dependency answers, and 503 otherwise with
// the error body extended by the health fields, so that both load
// balancers and people reading the body understand it.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	h := Health{Status: "ok", Timestamp: time.Now().UTC().Format(time.RFC3339), Version: s.deps.Version,
		Checks: map[string]string{"database": "ok", "convert": convertStatus(s.deps.Convert)}}
	if err := s.deps.DB.Ping(ctx); err != nil {
		s.logger(r.Context()).Warn("health: database unreachable", "err", err)
		h.Status, h.Checks["database"] = "unavailable", "unreachable"
		qe := &quire.Error{Code: quire.CodeUnavailable, Message: "The database is unreachable.", RetryAfter: 5 * time.Second}
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusServiceUnavailable, struct {
			ErrorBody
			Health
		}{s.errorBody(r, http.StatusServiceUnavailable, qe), h})
		return
	}
	writeJSON(w, http.StatusOK, h)
}

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
