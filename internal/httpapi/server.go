// Package httpapi is quire's HTTP adapter: routing, the middleware every
// request passes through (request id, logging, metrics, panic recovery,
// body limits, authentication), the error body of the contract, and thin
// handlers that translate between HTTP and the domain services.
package httpapi

import (
	"context"
	"log"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/metering"
)

// Deps are the services behind the API, as the interfaces of deps.go.
type Deps struct {
	Auth      Keys
	Telemetry Telemetry
	Signing   Signer
	// Conversion converts documents (POST /v1/convert); nil: a service
	// with both engines off, which refuses every conversion.
	Conversion Conversion
	Convert    Engine  // the LibreOffice pool, for /v1/health; nil: conversion disabled
	Chromium   Printer // the Chromium pool, for /v1/health; nil: HTML and Markdown go to LibreOffice
	Annotate   Filler
	PDFTools   PDFTools       // POST /v1/pdf/*; nil: not served
	Jobs       Jobs           // Prefer: respond-async; nil: every request is answered synchronously
	Limits     Limits         // per-key limits of metered routes; nil: none
	Meter      Meter          // metering of API operations; nil: none
	APIUsage   metering.Store // where GET /v1/usage/api reads; nil: not served
	DB         Pinger
	Logger     *slog.Logger
	Metrics    *prometheus.Registry // where the HTTP metrics go; /metrics serves it
	Version    string
	Pages      []Route        // the pages for people (internal/web)
	Memory     *memory.Budget // what the budgeted routes may hold at once (budget.go); nil: unbounded
	// Foreign are the routes of other APIs quire speaks (internal/gotenberg),
	// each with its Dialect.
	Foreign []Route
}

// Options are the HTTP-level limits and trust settings.
type Options struct {
	MaxBodyBytes    int64          // default body limit of routes without one
	TrustedProxies  []netip.Prefix // whose X-Forwarded-For is believed
	AdminToken      string         // bearer token of operator endpoints; empty: none
	ConvertMaxBytes int64          // largest document to convert
	ConvertMaxFiles int            // most files in one conversion request; 0: 10
	ReadTimeout     time.Duration  // longest time to read a request, body included
	WriteTimeout    time.Duration  // longest time to write an answer, from its first byte
	CORSOrigins     []string       // origins whose pages may call the API; empty or "*": any
}

// Route is one operation of the API. Capabilities declare their routes
// with their own limits; the server applies them uniformly.
type Route struct {
	Method, Path string
	Handler      http.HandlerFunc
	MaxBody      int64 // 0: Options.MaxBodyBytes
	Budgeted     bool  // charged to the memory budget (budget.go)
	// Quiet routes are high-volume beacons: their successful answers are
	// counted in the metrics but not logged one by one.
	Quiet bool
	// Page routes are for people, not programs: not in openapi.json.
	Page bool
	// Probe routes are polled by load balancers and scrapers: their
	// answers are logged at DEBUG.
	Probe bool
	// Async routes are run as a job when asked (Prefer: respond-async,
	// jobs.go).
	Async bool
	// Check, on an Async route, runs what its handler checks before it
	// spends time on the work (the request, its documents' formats, sizes
	// and expansion): a job's submission is refused as the request would be.
	Check func(*http.Request) error
	// Metered routes are an operation of the metering (quire.OpSign ...):
	// a request with an API key is held to the key's limits and its
	// answer counted (limits.go).
	Metered string
	Auth    Auth // what the route asks of the caller's API key (routeauth.go)
	// Dialect, set on another API's routes (Deps.Foreign), replaces Auth
	// and the error body with that API's own (dialect.go).
	Dialect *Dialect
}

// Server is the http.Handler of the whole API.
type Server struct {
	deps    Deps
	opt     Options
	log     *slog.Logger
	mux     *http.ServeMux
	routes  []Route
	keys    keyAreas
	metrics *metrics
	budget  *memory.Budget // nil: unbounded
	handler http.Handler
	// jobHandler runs jobs' requests: routing as the job's key, checked
	// again (runAsJobKey), without the write deadline.
	jobHandler http.Handler
	started    time.Time // for the uptime in /v1/health
}

// New returns the API server.
func New(d Deps, o Options) *Server {
	if d.Conversion == nil {
		d.Conversion = conversion.New(nil, nil)
	}
	s := &Server{deps: d, opt: o, log: d.Logger, mux: http.NewServeMux(), started: time.Now(), budget: d.Memory}
	s.metrics = newMetrics(d.Metrics, d.DB)
	if s.budget != nil {
		d.Metrics.MustRegister(memoryCollectors(s.budget)...)
	}
	s.routes = slices.Concat(s.opsRoutes(), s.authRoutes(), s.telemetryRoutes(), s.signingRoutes(), s.convertRoutes(), s.annotateRoutes(), s.pdfRoutes(), s.jobRoutes(), d.Pages, d.Foreign)
	for _, rt := range s.routes {
		s.mux.Handle(rt.Method+" "+rt.Path, s.routeHandler(rt))
	}
	s.keys = keyAreasOf(s.routes)
	s.handler = s.wrap(http.HandlerFunc(s.dispatch))
	s.jobHandler = s.withRequestID(s.observe(s.recoverPanics(http.HandlerFunc(s.runAsJobKey))))
	return s
}

// Routes lists the operations served, for the OpenAPI consistency test.
func (s *Server) Routes() []Route { return s.routes }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// wrap applies the middleware that every request passes through, outermost
// first: request id, then logging and metrics, then CORS (its headers are
// on every answer, a panic's included), then the write deadline, then
// panic recovery.
func (s *Server) wrap(h http.Handler) http.Handler {
	return s.withRequestID(s.observe(s.cors(s.writeDeadline(s.recoverPanics(h)))))
}

// HTTPServer is the http.Server of the API, with its timeouts. Reading a
// request, body included, is bounded by ReadTimeout; writing the answer by
// WriteTimeout from its first byte (writeDeadline), so that the time the
// work takes (a conversion, a signing) does not eat the client's time to
// receive it. errorLog takes net/http's own messages.
func (s *Server) HTTPServer(errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: min(10*time.Second, s.opt.ReadTimeout),
		ReadTimeout:       s.opt.ReadTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          errorLog,
	}
}

// dispatch authenticates the routes' key areas (Route.Auth), then routes,
// answering unknown paths and methods in the error body.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	if s.keys.needKey(r) {
		keyed, err := s.authenticate(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		r = keyed
	}
	s.route(w, r)
}

// runAsJobKey routes a job's request as the key that submitted it, if
// that key is still valid: one revoked (or gone) since gets the answer a
// request with it would, and nothing runs or is counted.
func (s *Server) runAsJobKey(w http.ResponseWriter, r *http.Request) {
	id, _ := r.Context().Value(jobKeyCtx{}).(string)
	key, err := s.deps.Auth.Recheck(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.route(w, withKey(r, key))
}

// route serves r by the route its method and path name.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		s.unrouted(w, r, h)
		return
	}
	_, infoOf(r.Context()).route, _ = strings.Cut(pattern, " ")
	h.ServeHTTP(w, r)
}

// unrouted turns the mux's own 404 and 405 answers into the error body.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request, h http.Handler) {
	probe := &headerProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		s.fail(w, r, quire.Errorf(quire.CodeMethodNotAllowed, "%s is not allowed on %s (allowed: %s).",
			r.Method, r.URL.Path, probe.header.Get("Allow")))
		return
	}
	s.fail(w, r, quire.Errorf(quire.CodeNotFound, "There is no %s here.", r.URL.Path))
}

// headerProbe records what the mux would answer, without writing it.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *headerProbe) WriteHeader(status int)      { p.status = status }

func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

type keyCtx struct{}

// jobKeyCtx holds the id of the key a job's request runs as (RunJob).
type jobKeyCtx struct{}

// APIKey returns the key that authenticated the request, if any.
func APIKey(ctx context.Context) (quire.APIKey, bool) {
	k, ok := ctx.Value(keyCtx{}).(quire.APIKey)
	return k, ok
}

// routeHandler applies the route's own settings: the body limit
// (a declared length over it is refused at once; reading past it fails with
// *http.MaxBytesError, which bodyError turns into 413, as it does every
// failure to receive the body).
func (s *Server) routeHandler(rt Route) http.Handler {
	limit := rt.MaxBody
	if limit == 0 {
		limit = s.opt.MaxBodyBytes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri := infoOf(r.Context())
		ri.quiet, ri.probe = rt.Quiet, rt.Probe
		if rt.Dialect != nil {
			var err error
			if r, err = s.speak(rt.Dialect, r); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		if r.ContentLength > limit {
			s.fail(w, r, tooLarge(limit))
			return
		}
		r.Body = &body{ReadCloser: http.MaxBytesReader(w, r.Body, limit)}
		if webhooks, async, err := s.asksAsync(rt, r); err != nil || async {
			if err != nil {
				s.fail(w, r, err)
			} else {
				s.submit(w, r, rt, webhooks)
			}
			return
		}
		h := rt.Handler
		if rt.Budgeted && s.budget != nil {
			h = s.withBudget(limit, h)
		}
		if rt.Metered != "" {
			h = s.keyed(rt.Metered, h)
		}
		h(w, r)
	})
}
