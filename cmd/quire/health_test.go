package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHealthIsReadiness: with a configured engine that cannot start,
// /v1/health answers 503 ENGINE_UNAVAILABLE with Retry-After and says why,
// /v1/health/live answers 200, and neither probe is logged at INFO.
func TestHealthIsReadiness(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), "QUIRE_CONVERT_WORKERS=1", "QUIRE_LIBREOFFICE_DIR=/nonexistent")
	var h struct {
		Code, Status string
		Checks       map[string]string
	}
	deadline := time.Now().Add(30 * time.Second)
	for tick := time.Tick(200 * time.Millisecond); ; <-tick {
		st, b := in.get("/v1/health")
		if st != 503 || json.Unmarshal(b, &h) != nil || h.Code != "ENGINE_UNAVAILABLE" || h.Status != "unavailable" {
			t.Fatalf("health with a dead engine: %d %s", st, b)
		}
		if strings.Contains(h.Checks["convert"], "last error") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health never names the engine's failure: %s", b)
		}
	}
	if res, err := http.Get(in.base + "/v1/health"); err != nil || res.Header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After on the 503 (%v)", err)
	} else {
		res.Body.Close()
	}
	if st, b := in.get("/v1/health/live"); st != 200 {
		t.Errorf("live: %d %s", st, b)
	}
	addr := "QUIRE_ADDR=" + strings.TrimPrefix(in.base, "http://")
	if out, err := runCLI(t, in.data, []string{addr}, "health"); err == nil || !strings.Contains(out, "503") {
		t.Errorf("quire health with a dead engine (%v): %s", err, out)
	}
	if out, err := runCLI(t, in.data, []string{addr}, "health", "--live"); err != nil {
		t.Errorf("quire health --live (%v): %s", err, out)
	}
	for _, line := range strings.Split(in.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"request"`) && strings.Contains(line, "/v1/health") {
			t.Errorf("a probe is logged at the default level: %s", line)
		}
	}
}

// TestHealthShape: ready, /v1/health has the hosted API's fields.
func TestHealthShape(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir())
	st, b := in.get("/v1/health")
	var h struct {
		Status, Timestamp, Version string
		Instance                   *struct {
			StartTime string
			Uptime    *float64
		}
		Checks map[string]string
	}
	if st != 200 || json.Unmarshal(b, &h) != nil || h.Status != "healthy" || h.Version == "" || h.Instance == nil || h.Instance.Uptime == nil {
		t.Fatalf("health: %d %s", st, b)
	}
	for _, ts := range []string{h.Timestamp, h.Instance.StartTime} {
		if _, err := time.Parse(time.RFC3339, ts); err != nil {
			t.Errorf("not RFC 3339: %q", ts)
		}
	}
	if h.Checks["database"] != "ok" || h.Checks["convert"] != "disabled" {
		t.Errorf("checks: %v", h.Checks)
	}
	if out, err := runCLI(t, in.data, []string{"QUIRE_ADDR=" + strings.TrimPrefix(in.base, "http://")}, "health"); err != nil {
		t.Errorf("quire health (%v): %s", err, out)
	}
}
