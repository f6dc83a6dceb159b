package httpapi

import (
	"context"
	_ "embed"
	"net/http"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdfsign"
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
	// TSA is the state of each time-stamp authority. A TSA that is down
	// stops signing only (503 there), not readiness: conversion and
	// unsigned work go on.
	TSA []pdfsign.TSAState `json:"tsa,omitempty"`
	// Engines names the version of each conversion engine that runs,
	// such as {"libreoffice": "25.2.3.2"}.
	Engines map[string]string `json:"engines,omitempty"`
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
		Checks:   map[string]string{"database": "ok", "convert": convertStatus(s.deps.Convert)}, Engines: s.engineVersions()}
	if s.deps.Signing != nil {
		h.TSA = s.deps.Signing.TSAStates()
	}
	var qe *quire.Error
	if !convertReady(s.deps.Convert) {
		qe = &quire.Error{Code: quire.CodeEngineBusy, Message: "The conversion engine has no warm worker: " + h.Checks["convert"] + ".",
			RetryAfter: 5 * time.Second}
	}
	if c := s.deps.Chromium; c != nil {
		st := c.Status()
		h.Checks["chromium"] = engineStatus(st, "browsers")
		if !engineReady(st) {
			qe = &quire.Error{Code: quire.CodeEngineBusy, Message: "The Chromium engine has no warm browser: " + h.Checks["chromium"] + ".",
				RetryAfter: 5 * time.Second}
		}
	}
	if err := s.deps.DB.Ping(ctx); err != nil {
		s.logger(r.Context()).Warn("health: database unreachable", "err", err)
		h.Checks["database"] = "unreachable"
		qe = errDatabaseDown
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

// engineVersions are Health.Engines: each engine's version, once known.
func (s *Server) engineVersions() map[string]string {
	v := map[string]string{}
	if s.deps.Convert != nil {
		if lo := s.deps.Convert.Status().Version; lo != "" {
			v["libreoffice"] = lo
		}
	}
	if s.deps.Chromium != nil {
		if c := s.deps.Chromium.Version(); c != "" {
			v["chromium"] = c
		}
	}
	return v
}

// live is liveness: the process answers, whatever its dependencies do.
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
}

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
