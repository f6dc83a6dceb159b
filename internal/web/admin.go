package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/keylimit"
)

// cookieName is the admin session's cookie, sent only to /admin.
const cookieName = "quire_admin"

var (
	disabled = message{Title: "The dashboard is disabled",
		Text: "Set QUIRE_ADMIN_TOKEN (16 characters or more) and restart quire to enable /admin."}
	refused = message{Title: "Form refused",
		Text: "The form was not sent from this dashboard (its security token is missing or wrong, or it came from another site). Reload /admin and try again."}
)

// adminHandler is a page of a logged-in operator.
type adminHandler func(w http.ResponseWriter, r *http.Request, se session)

// admin lets h run in a live session. Without QUIRE_ADMIN_TOKEN the
// dashboard does not exist; without a session, GET /admin is the login
// form, other pages send there and forms are refused.
func (p *Pages) admin(h adminHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if p.opt.AdminToken == "" {
			p.render(w, http.StatusNotFound, "message", disabled)
			return
		}
		c, err := r.Cookie(cookieName)
		if err == nil {
			if se, ok := p.sessions.get(c.Value); ok {
				h(w, r, se)
				return
			}
		}
		switch {
		case r.Method != http.MethodGet:
			p.render(w, http.StatusForbidden, "message", message{Title: "Not logged in",
				Text: "Your session has ended. Log in again at /admin."})
		case r.URL.Path == "/admin":
			p.render(w, http.StatusOK, "login", loginData{})
		default:
			http.Redirect(w, r, "/admin", http.StatusSeeOther)
		}
	}
}

// checked refuses a form that lacks the session's CSRF token or comes
// from another origin.
func (p *Pages) checked(h adminHandler) adminHandler {
	return func(w http.ResponseWriter, r *http.Request, se session) {
		token := r.PostFormValue("csrf")
		if !p.sameOrigin(r) || subtle.ConstantTimeCompare([]byte(token), []byte(se.csrf)) != 1 {
			p.render(w, http.StatusForbidden, "message", refused)
			return
		}
		h(w, r, se)
	}
}

// sameOrigin reports whether the request's Origin, when the browser sent
// one, is this server: QUIRE_PUBLIC_URL's origin when set, else the host
// the request came to (the scheme is not compared then: a TLS proxy that
// is not among QUIRE_TRUSTED_PROXIES hides it, and a cross-site request
// differs in the host).
func (p *Pages) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true // not sent by every browser for same-origin forms; the CSRF token still holds
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	if p.opt.PublicURL != "" {
		return o == p.opt.PublicURL || strings.HasPrefix(p.opt.PublicURL, o+"/")
	}
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host == r.Host
}

type loginData struct {
	Error string
}

// login opens a session for the right token. Attempts are counted per
// client address, right or wrong, so guessing is slow.
func (p *Pages) login(w http.ResponseWriter, r *http.Request) {
	if p.opt.AdminToken == "" {
		p.render(w, http.StatusNotFound, "message", disabled)
		return
	}
	if !p.sameOrigin(r) {
		p.render(w, http.StatusForbidden, "message", refused)
		return
	}
	if err := p.deps.Limiter.Allow(r.Context(), "admin login", httpapi.ClientIP(r), p.opt.LoginRate); err != nil {
		status, msg := p.explain(w, r, err)
		p.render(w, status, "login", loginData{Error: msg})
		return
	}
	got, want := sha256.Sum256([]byte(r.PostFormValue("token"))), sha256.Sum256([]byte(p.opt.AdminToken))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		p.deps.Logger.Warn("admin login refused", "client", httpapi.ClientIP(r))
		p.render(w, http.StatusUnauthorized, "login", loginData{Error: "That is not the admin token."})
		return
	}
	id, _ := p.sessions.start()
	p.setCookie(w, r, id, p.opt.SessionTTL)
	p.deps.Logger.Info("admin logged in", "client", httpapi.ClientIP(r))
	http.Redirect(w, r, "/admin", http.StatusSeeOther)
}

func (p *Pages) logout(w http.ResponseWriter, r *http.Request, _ session) {
	if c, err := r.Cookie(cookieName); err == nil {
		p.sessions.end(c.Value)
	}
	p.setCookie(w, r, "", -1)
	http.Redirect(w, r, "/admin", http.StatusSeeOther)
}

func (p *Pages) setCookie(w http.ResponseWriter, r *http.Request, value string, ttl time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: value, Path: "/admin", MaxAge: int(ttl.Seconds()),
		HttpOnly: true, Secure: httpapi.HTTPS(r), SameSite: http.SameSiteStrictMode})
}

// dashboardData is the dashboard: licences, API keys, the engine.
type dashboardData struct {
	CSRF       string
	Licenses   []quire.License
	Keys       []keyRow
	Limits     bool           // the keys' limits are shown
	Engine     *engine.Status // nil: conversion disabled
	Jobs       *jobsView      // nil: jobs not served
	Created    string         // id of the licence just created
	Error      string
	ErrorIn    string     // the section of the refused form: licenses or keys
	Form       url.Values // the refused form
	MonthStart string     // the usage page's range for this month
	Today      string
}

// keyRow is an API key with the limits that apply to it and the
// documents it processed this month (UTC), which its quota counts.
type keyRow struct {
	quire.APIKey
	Limits     keylimit.Limits
	Overridden bool
	MonthDocs  int64
}

func (p *Pages) dashboard(w http.ResponseWriter, r *http.Request, se session) {
	d, err := p.dashboardData(r.Context(), se)
	if err != nil {
		p.fail(w, r, "message", func(msg string) any { return message{Title: "Cannot show the dashboard", Text: msg} }, err)
		return
	}
	d.Created = r.URL.Query().Get("created")
	p.render(w, http.StatusOK, "admin", d)
}

func (p *Pages) dashboardData(ctx context.Context, se session) (dashboardData, error) {
	d := dashboardData{CSRF: se.csrf}
	var err error
	if d.Licenses, err = p.deps.Telemetry.Licenses(ctx); err != nil {
		return d, err
	}
	if d.Keys, err = p.keyRows(ctx); err != nil {
		return d, err
	}
	today := p.opt.Now().UTC()
	d.Limits, d.Today = p.deps.Limits != nil, today.Format(dateLayout)
	d.MonthStart = quire.MonthStart(quire.Month(today)).Format(dateLayout)
	if p.deps.Convert != nil {
		st := p.deps.Convert.Status()
		d.Engine = &st
	}
	if p.deps.Jobs != nil {
		if d.Jobs, err = p.jobsView(ctx); err != nil {
			return d, err
		}
	}
	return d, nil
}

// jobsView is the progress of the jobs (Prefer: respond-async): every
// instance's, read from the database.
type jobsView struct {
	Queued, Running int
	OldestWait      string // how long the oldest queued job has waited; empty: none waits
	Recent          []quire.Job
}

func (p *Pages) jobsView(ctx context.Context) (*jobsView, error) {
	n, err := p.deps.Jobs.Counts(ctx)
	if err != nil {
		return nil, err
	}
	v := &jobsView{Queued: n.Queued, Running: n.Running}
	if !n.OldestQueued.IsZero() {
		v.OldestWait = p.opt.Now().Sub(n.OldestQueued).Round(time.Second).String()
	}
	v.Recent, err = p.deps.Jobs.List(ctx, "", 10)
	return v, err
}

func (p *Pages) createLicense(w http.ResponseWriter, r *http.Request, se session) {
	l, err := p.deps.Telemetry.CreateLicense(r.Context(), r.PostFormValue("organization"), r.PostFormValue("email"), r.PostFormValue("hosts"))
	if err == nil {
		http.Redirect(w, r, "/admin?created="+url.QueryEscape(l.ID)+"#licenses", http.StatusSeeOther)
		return
	}
	p.refuseForm(w, r, se, "licenses", err)
}

// setLicenseHosts replaces (or, left empty, clears) a licence's hosts.
func (p *Pages) setLicenseHosts(w http.ResponseWriter, r *http.Request, se session) {
	key := r.PostFormValue("key")
	err := p.deps.Telemetry.SetLicenseHosts(r.Context(), key, r.PostFormValue("hosts"))
	if errors.Is(err, quire.ErrNotFound) {
		err = quire.Errorf(quire.CodeNotFound, "There is no licence %q.", key)
	}
	if err == nil {
		p.deps.Logger.Info("licence hosts set from the dashboard", "license_key", key, "client", httpapi.ClientIP(r))
		http.Redirect(w, r, "/admin#licenses", http.StatusSeeOther)
		return
	}
	p.refuseForm(w, r, se, "licenses", err)
}

// refuseForm shows the dashboard again with the refused form's values and
// why, in its section.
func (p *Pages) refuseForm(w http.ResponseWriter, r *http.Request, se session, section string, err error) {
	status, msg := p.explain(w, r, err)
	d, derr := p.dashboardData(r.Context(), se)
	if derr != nil {
		status, msg = p.explain(w, r, derr)
	}
	d.Error, d.ErrorIn, d.Form = msg, section, r.PostForm
	p.render(w, status, "admin", d)
}

func (p *Pages) revokeKey(w http.ResponseWriter, r *http.Request, _ session) {
	id := r.PostFormValue("id")
	err := p.deps.Auth.Revoke(r.Context(), id)
	if errors.Is(err, quire.ErrNotFound) {
		err = quire.Errorf(quire.CodeNotFound, "There is no API key %q.", id)
	}
	if err != nil {
		p.fail(w, r, "message", func(msg string) any { return message{Title: "Cannot revoke the key", Text: msg} }, err)
		return
	}
	p.deps.Logger.Info("API key revoked from the dashboard", "key_id", id, "client", httpapi.ClientIP(r))
	http.Redirect(w, r, "/admin#keys", http.StatusSeeOther)
}
