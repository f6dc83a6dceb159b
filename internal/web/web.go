// Package web serves quire's pages for people: API information at /, the
// interactive API reference at /docs, the public verification page at
// /verify and the operator's dashboard at /admin. Pages are rendered on the
// server from html/template; scripts and styles are embedded files served
// from the same origin, so the Content-Security-Policy allows nothing else.
package web

import (
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/jobs"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/telemetry"
)

//go:embed templates static
var files embed.FS

// Deps are the services the pages show.
type Deps struct {
	Auth      *auth.Service
	Telemetry *telemetry.Service
	Signing   *signing.Service
	Convert   Engine             // the LibreOffice pool; nil: conversion disabled
	Jobs      *jobs.Service      // the jobs' progress; nil: not shown
	Limits    *keylimit.Enforcer // the per-key limits; nil: not shown
	APIUsage  metering.Store     // where GET /v1/usage/api reads; nil: not shown
	Limiter   *ratelimit.Limiter // counts admin login attempts; required with an admin token
	Logger    *slog.Logger
	Version   string
}

// Engine is what the dashboard shows of a pool of engine processes
// (*libreoffice.Pool): its state.
type Engine interface {
	Status() engine.Status
}

// Options are the pages' settings.
type Options struct {
	PublicURL  string         // absolute base URL; empty: links are relative to the request
	AdminToken string         // empty: /admin is disabled
	SessionTTL time.Duration  // lifetime of an admin session
	LoginRate  ratelimit.Rate // admin login attempts per client address
	Now        func() time.Time
}

// Pages serves the pages.
type Pages struct {
	deps     Deps
	opt      Options
	tmpl     map[string]*template.Template
	assets   map[string]asset
	sessions *sessions
}

// New parses the templates and returns the pages.
func New(d Deps, o Options) *Pages {
	if o.Now == nil {
		o.Now = time.Now
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	return &Pages{deps: d, opt: o, tmpl: parseTemplates(), assets: embeddedAssets(),
		sessions: newSessions(o.SessionTTL, o.Now)}
}

// Routes lists the pages for the API server. The API information and the
// reference are operations of the hosted API's OpenAPI document; the rest
// are pages for people only.
func (p *Pages) Routes() []httpapi.Route {
	page := func(method, path string, h http.HandlerFunc) httpapi.Route {
		return httpapi.Route{Method: method, Path: path, Handler: secured(h), Page: true}
	}
	verifyForm := page("POST", "/verify", p.verifyForm)
	verifyForm.MaxBody = p.deps.Signing.MaxRequestBytes()
	verifyForm.Budgeted = true // it holds the document as /v1/verify does
	return []httpapi.Route{
		{Method: "GET", Path: "/{$}", Handler: p.info},
		{Method: "GET", Path: "/docs", Handler: secured(p.docs)},
		{Method: "GET", Path: "/documentation", Handler: secured(p.docs)},
		page("GET", "/static/", p.serveStatic),
		page("GET", "/verify", p.verifyPage),
		verifyForm,
		page("GET", "/admin", p.admin(p.dashboard)),
		page("POST", "/admin/login", p.login),
		page("POST", "/admin/logout", p.admin(p.checked(p.logout))),
		page("POST", "/admin/licenses", p.admin(p.checked(p.createLicense))),
		page("POST", "/admin/licenses/hosts", p.admin(p.checked(p.setLicenseHosts))),
		page("POST", "/admin/keys/revoke", p.admin(p.checked(p.revokeKey))),
		page("POST", "/admin/keys/limits", p.admin(p.checked(p.setKeyLimits))),
		page("GET", "/admin/usage", p.admin(p.usage)),
		page("GET", "/admin/usage.csv", p.admin(p.usageCSV)),
	}
}

// policy is the Content-Security-Policy of every page: only this origin's
// files, no inline script or style, no framing, forms only to this origin.
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// secured sets the security headers of a page.
func secured(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", policy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin") // no-referrer would make forms send Origin: null
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		h(w, r)
	}
}

// baseURL is the absolute URL of this server: QUIRE_PUBLIC_URL, or the
// scheme and host the request came to.
func (p *Pages) baseURL(r *http.Request) string {
	if p.opt.PublicURL != "" {
		return p.opt.PublicURL
	}
	scheme := "http"
	if httpapi.HTTPS(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
