package httpapi

import (
	"crypto/subtle"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/telemetry"
)

// collectMaxBody is the body limit of POST /v1/collect: 100 events and
// metadata fit in far less.
const collectMaxBody = 64 << 10

func (s *Server) telemetryRoutes() []Route {
	routes := []Route{
		{Method: "POST", Path: "/v1/collect", Handler: s.collect, MaxBody: collectMaxBody, Quiet: true},
		{Method: "GET", Path: "/v1/usage", Handler: s.usage},
	}
	if s.deps.APIUsage != nil {
		routes = append(routes, Route{Method: "GET", Path: "/v1/usage/api", Handler: s.apiUsage})
	}
	return routes
}

// collect answers 204 once the events are committed. Editor libraries
// ignore the answer; errors are for the operator's logs and metrics.
func (s *Server) collect(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	req := telemetry.Request{LicenseKey: r.Header.Get(telemetry.LicenseHeader)}
	if err := json.Unmarshal(body, &req, collectDecoding); err != nil {
		s.deps.Telemetry.Refused()
		s.fail(w, r, collectDecodeError(err))
		return
	}
	if err := s.deps.Telemetry.Collect(r.Context(), &req); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// collectDecoding decodes payloads as encoding/json did before: member
// names match in any case, and the last of duplicate members wins. (The
// decoder is the one of encoding/json/v2, which allocates less and takes
// about a tenth of intake's CPU time less per request; it refuses invalid
// UTF-8 anywhere in the body, which PostgreSQL would refuse to store.)
var collectDecoding = json.JoinOptions(json.MatchCaseInsensitiveNames(true), jsontext.AllowDuplicateNames(true))

// collectDecodeError names the member whose JSON type is wrong, or where
// the JSON is broken.
func collectDecodeError(err error) error {
	var se *json.SemanticError
	if errors.As(err, &se) && se.GoType != nil {
		return quire.Invalid("The telemetry payload is not valid.", quire.Detail{Field: memberName(se.JSONPointer), Issue: "must be " + jsonType(se.GoType.Kind())})
	}
	field := "body"
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		field = memberName(syn.JSONPointer)
	}
	return quire.Invalid("The body is not valid JSON.", quire.Detail{Field: field, Issue: err.Error()})
}

// memberName names the member at p as validation details do:
// events[0].documentId.
func memberName(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

func jsonType(k reflect.Kind) string {
	switch k {
	case reflect.String, reflect.Pointer:
		return "a string"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	}
	return "of another type"
}

// apiUsage serves the metering of API operations: every key's for the
// admin token, an API key's own otherwise.
func (s *Server) apiUsage(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q, err := metering.ParseQuery(v.Get("from"), v.Get("to"), v.Get("groupBy"), time.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !s.isAdmin(r) {
		key, err := s.deps.Auth.Authenticate(r.Context(), bearer(r))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		q.Keys = []string{key.ID}
	}
	rep, err := metering.Build(r.Context(), s.deps.APIUsage, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeReport(w, r, rep, func(w io.Writer) error { return metering.WriteCSV(w, rep) })
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
	writeReport(w, r, rep, func(w io.Writer) error { return telemetry.WriteCSV(w, rep) })
}

// writeReport answers a usage report as JSON, or as CSV when the client
// accepts text/csv.
func writeReport(w http.ResponseWriter, r *http.Request, rep any, writeCSV func(io.Writer) error) {
	if strings.Contains(r.Header.Get("Accept"), "text/csv") {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		writeCSV(w)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// isAdmin reports whether r carries the admin token.
func (s *Server) isAdmin(r *http.Request) bool {
	return s.opt.AdminToken != "" && subtle.ConstantTimeCompare([]byte(bearer(r)), []byte(s.opt.AdminToken)) == 1
}

// usageScope returns the license keys the caller may read, within asked.
func (s *Server) usageScope(r *http.Request, asked []string) ([]string, error) {
	if s.isAdmin(r) {
		return asked, nil
	}
	key, err := s.deps.Auth.Authenticate(r.Context(), bearer(r))
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
