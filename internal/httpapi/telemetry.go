package httpapi

import (
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/telemetry"
)

// collectMaxBody is the body limit of POST /v1/collect: 100 events and
// metadata fit in far less.
const collectMaxBody = 64 << 10

func (s *Server) telemetryRoutes() []Route {
	return []Route{
		{Method: "POST", Path: "/v1/collect", Handler: s.collect, MaxBody: collectMaxBody, Quiet: true},
		{Method: "GET", Path: "/v1/usage", Handler: s.usage},
	}
}

// collect answers 204 once the events are committed. Editor libraries
// ignore the answer; errors are for the operator's logs and metrics.
func (s *Server) collect(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.deps.Telemetry.Collect(r.Context(), body, r.Header.Get(telemetry.LicenseHeader)); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// usage serves the usage report. The admin token reads every license; an
// API key reads the licenses whose contact e-mail is the key's. A license
// key alone never reads usage: license keys are public in browser code.
func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q, err := telemetry.ParseQuery(v.Get("from"), v.Get("to"), v.Get("groupBy"), v["licenseKey"], time.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if q.Keys, err = s.usageScope(r, q.Keys); err != nil {
		s.fail(w, r, err)
		return
	}
	rep, err := s.deps.Telemetry.Report(r.Context(), q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "text/csv") {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		telemetry.WriteCSV(w, rep)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// usageScope returns the license keys the caller may read, within asked.
func (s *Server) usageScope(r *http.Request, asked []string) ([]string, error) {
	token := bearer(r)
	if s.opt.AdminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.opt.AdminToken)) == 1 {
		return asked, nil
	}
	key, err := s.deps.Auth.Authenticate(r.Context(), token)
	if err != nil {
		return nil, err
	}
	own, err := s.deps.Telemetry.KeysOf(r.Context(), key.Email)
	if err != nil {
		return nil, err
	}
	if len(own) == 0 {
		return nil, quire.Errorf(quire.CodeForbidden, "No license has %s as its contact e-mail.", key.Email)
	}
	for _, k := range asked {
		if !slices.Contains(own, k) {
			return nil, quire.Errorf(quire.CodeForbidden, "This API key may not read the usage of license key %s.", k)
		}
	}
	if asked != nil {
		return asked, nil
	}
	return own, nil
}
