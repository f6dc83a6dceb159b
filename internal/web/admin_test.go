package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/telemetry"
	"github.com/quire-dev/quire/internal/web"
)

func (b *browser) login(base, token string) {
	b.t.Helper()
	b.do(chromedp.Navigate(base+"/admin"),
		chromedp.SendKeys(chromedp.CSS("#token"), token, chromedp.NodeVisible),
		chromedp.Submit(chromedp.CSS("#token")))
}

// The conversion pool of tests that start one runs this binary as its
// workers.
func TestMain(m *testing.M) {
	apitest.RunWorkerIfAsked()
	os.Exit(m.Run())
}

func TestAdmin(t *testing.T) {
	s := server(t, apitest.Config{ConvertWorkers: 1})
	ctx := context.Background()
	apiKey, rec, err := s.Auth.CreateKey(ctx, "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, s.URL)
	b.allow("status of 401 (Unauthorized) " + s.URL + "/admin/login") // the wrong token's answer
	b.allow("status of 403 (Forbidden) " + s.URL + "/admin/licenses") // the forged form's
	b.allow("status of 400 (Bad Request) " + s.URL + "/admin/")       // the bad address's and the bad ranges' answers

	b.login(s.URL, "not-the-token-at-all")
	b.waitFor("the refusal", `!!document.querySelector('.error')`)
	if got := b.text(".error"); got != "That is not the admin token." {
		t.Errorf("wrong token: %q", got)
	}
	b.screenshot("admin-login")
	b.login(s.URL, apitest.AdminToken)
	b.waitFor("the dashboard", `!!document.querySelector('#licenses')`)

	// A licence, created with the form.
	b.do(chromedp.SendKeys(chromedp.CSS("#organization"), "Acme Books"),
		chromedp.SendKeys(chromedp.CSS("#email"), "billing@acme.example"),
		chromedp.Submit(chromedp.CSS("#organization")))
	b.waitFor("the new licence", `!!document.querySelector('tr.new')`)
	lics, err := s.Telemetry.Licenses(ctx)
	if err != nil || len(lics) != 1 || lics[0].Organization != "Acme Books" {
		t.Fatalf("licences %+v, %v", lics, err)
	}
	key := lics[0].Key
	if !strings.Contains(b.text("tr.new"), key) {
		t.Errorf("the new licence's row lacks its key %s", key)
	}

	// Its hosts, set with the form of its row.
	hosts := `form[action="/admin/licenses/hosts"] input[name=hosts]`
	b.do(chromedp.SendKeys(chromedp.CSS(hosts), "Acme.example, www.acme.example"), chromedp.Submit(chromedp.CSS(hosts)))
	b.waitFor("the saved hosts", `document.querySelector(`+js(hosts)+`)?.value === 'acme.example, www.acme.example'`)
	if lics, _ := s.Telemetry.Licenses(ctx); len(lics[0].Hosts) != 2 {
		t.Errorf("hosts saved from the dashboard: %q", lics[0].Hosts)
	}

	// Opens on two of the last seven days: two documents (three opens)
	// two days ago; today one document, an anonymous open and one from
	// another host.
	today := s.Clock.Now().UTC().Truncate(24 * time.Hour)
	open := func(day time.Time, host string, docs ...string) {
		s.Clock.Set(day.Add(10 * time.Hour))
		for _, d := range docs {
			req := telemetry.Request{LicenseKey: key, BrowserInfo: telemetry.BrowserInfo{Hostname: host},
				Events: []telemetry.Event{{Timestamp: day.Format(time.RFC3339), DocumentID: d}}}
			if err := s.Telemetry.Collect(ctx, &req); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := s.Clock.Now()
	open(today.AddDate(0, 0, -2), "acme.example", "HASH-A", "HASH-B", "HASH-A")
	open(today, "www.acme.example", "HASH-C", "")
	open(today, "elsewhere.example", "HASH-D")
	s.Clock.Set(now)
	for range 2 { // and two verifications with the API key, metered
		if res := verify(t, s, apiKey); res.StatusCode != http.StatusOK {
			t.Fatalf("verify: %d", res.StatusCode)
		}
	}

	from, to := today.AddDate(0, 0, -6).Format("2006-01-02"), today.Format("2006-01-02")
	query := "?license=" + url.QueryEscape(key) + "&from=" + from + "&to=" + to
	b.do(chromedp.Navigate(s.URL + "/admin/usage" + query))
	b.waitFor("the chart", `!!document.querySelector('svg.chart')`)
	if days, bars := b.count("#telemetry svg.chart g.day"), b.count("#telemetry svg.chart rect.bar"); days != 7 || bars != 15 {
		t.Errorf("chart of %d days and %d bars, want 7 and 15 (one of opens from other hosts)", days, bars)
	}
	twoDaysAgo := today.AddDate(0, 0, -2).Format("2006-01-02")
	for sel, want := range map[string]string{
		`g.day[data-date="` + twoDaysAgo + `"] rect.docs`:  twoDaysAgo + ": 2 documents",
		`g.day[data-date="` + twoDaysAgo + `"] rect.opens`: twoDaysAgo + ": 3 opens",
		`g.day[data-date="` + to + `"] rect.opens`:         to + ": 3 opens",
		`g.day[data-date="` + to + `"] rect.other`:         to + ": 1 opens from other hosts",
	} {
		if got := eval[string](b, "document.querySelector("+js(sel)+").textContent"); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if h := eval[string](b, `document.querySelector('g.day[data-date="`+from+`"] rect.docs').getAttribute('height')`); h != "0" {
		t.Errorf("a day without opens has a bar of height %s", h)
	}
	apiRow := `#api tr[data-key="` + rec.ID + `"][data-op="verify"]`
	if got := b.text(apiRow); !strings.Contains(got, "verify\t2\t2\t0") {
		t.Errorf("API usage row %q, want 2 requests of 2 documents and 0 pages", got)
	}
	if n := b.count("#api svg.chart rect.bar.k0"); n != 7 {
		t.Errorf("API chart: %d bars of the key, want one a day", n)
	}
	b.screenshot("admin-usage")
	for _, q := range []string{"?from=2026-13-01", "?from=2024-01-01&to=2026-01-01", "?from=2026-02-02&to=2026-02-01"} {
		if st := eval[int](b, "fetch('/admin/usage"+q+"').then(r => r.status)"); st != http.StatusBadRequest {
			t.Errorf("usage%s: %d, want 400", q, st)
		}
	}

	csv := eval[string](b, "fetch('/admin/usage.csv"+query+"').then(r => r.text())")
	for _, want := range []string{
		"licenseKey,organization,registered,community,periodStart,newDocuments,activeDocuments,opens,anonymousOpens,otherHostOpens",
		key + ",Acme Books,true,false," + twoDaysAgo + "T00:00:00Z,2,2,3,0,0",
		key + ",Acme Books,true,false," + to + "T00:00:00Z,1,1,3,1,1",
	} {
		if !strings.Contains(csv, want) {
			t.Errorf("CSV lacks %q:\n%s", want, csv)
		}
	}

	// The key's rate, set with the form of its row.
	b.do(chromedp.Navigate(s.URL + "/admin"))
	rate := "#rate-" + rec.ID
	b.do(chromedp.SendKeys(chromedp.CSS(rate), "30/1h", chromedp.NodeVisible), chromedp.Submit(chromedp.CSS(rate)))
	b.waitFor("the saved rate", `document.querySelector(`+js(rate)+`)?.placeholder === '30/1h'`)
	if o, _ := s.Limits.Overrides(ctx); o[rec.ID].Rate == nil || *o[rec.ID].Rate != 30 || o[rec.ID].RatePer != time.Hour {
		t.Errorf("overrides after the form: %+v", o)
	}

	// Key revocation, with the dashboard's button.
	b.do(chromedp.Click(chromedp.CSS("#key-"+rec.ID+` form[action="/admin/keys/revoke"] button`), chromedp.NodeVisible))
	b.waitFor("the revocation", `(document.querySelector(`+js("#key-"+rec.ID+" .status")+`)?.textContent || '').startsWith('revoked')`)
	if _, err := s.Auth.Authenticate(ctx, apiKey); err == nil {
		t.Error("the revoked key still authenticates")
	}
	if got := b.text("#engine"); !strings.Contains(got, "1 configured: 1 ready") || !strings.Contains(got, "MiB") ||
		s.Convert.Status().Version == "" || !strings.Contains(got, "LibreOffice "+s.Convert.Status().Version) {
		t.Errorf("engine state:\n%s", got)
	}
	b.screenshot("admin")

	// A form without the session's CSRF token is refused, and does nothing.
	status := eval[int](b, `fetch('/admin/licenses', {method: 'POST', body: new URLSearchParams({organization: 'Forged', email: 'f@example.com'})}).then(r => r.status)`)
	if status != http.StatusForbidden {
		t.Errorf("CSRF-less POST: %d, want 403", status)
	}
	if lics, _ := s.Telemetry.Licenses(ctx); len(lics) != 1 {
		t.Errorf("the forged form created a licence: %+v", lics)
	}
	// With the token, a bad address is a 400 that shows the form again.
	page := eval[string](b, `fetch('/admin/licenses', {method: 'POST', body: new URLSearchParams({
		csrf: document.querySelector('input[name=csrf]').value, organization: 'Typo Ltd', email: 'not an address'})}).
		then(r => r.status + ' ' + r.headers.get('Content-Type')).then(x => x)`)
	if page != "400 text/html; charset=utf-8" {
		t.Errorf("licence with a bad address: %s", page)
	}

	b.do(chromedp.Click(chromedp.CSS(`form[action="/admin/logout"] button`)))
	b.waitFor("the login form", `!!document.querySelector('#token')`)
}

// TestAdminSession checks the cookie, the Origin check and the rate of
// login attempts over plain HTTP.
func TestAdminSession(t *testing.T) {
	s := server(t, apitest.Config{AdminLoginRate: ratelimit.Rate{N: 3, Per: time.Hour}})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(token, origin string) *http.Response {
		req, _ := http.NewRequest("POST", s.URL+"/admin/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := login(apitest.AdminToken, s.URL)
	c := res.Header.Get("Set-Cookie")
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") ||
		!strings.Contains(c, "Path=/admin") || strings.Contains(c, "Secure") {
		t.Errorf("login: %d, cookie %q", res.StatusCode, c)
	}
	if res := login(apitest.AdminToken, "https://evil.example"); res.StatusCode != http.StatusForbidden {
		t.Errorf("login from another origin: %d, want 403", res.StatusCode)
	}
	for range 2 {
		if res := login("wrong-token-0000000", ""); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("wrong token: %d, want 401", res.StatusCode)
		}
	}
	if res := login(apitest.AdminToken, ""); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Errorf("fourth attempt in the hour: %d, want 429", res.StatusCode)
	}
	s.Clock.Advance(time.Hour)
	res = login(apitest.AdminToken, "")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("after the window: %d, want 303", res.StatusCode)
	}

	// The session lasts the test servers' TTL, one hour.
	dashboard := func() string {
		req, _ := http.NewRequest("GET", s.URL+"/admin", nil)
		req.AddCookie(res.Cookies()[0])
		r, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		page, _ := io.ReadAll(r.Body)
		return string(page)
	}
	if !strings.Contains(dashboard(), "Log out") {
		t.Error("the session does not open the dashboard")
	}
	s.Clock.Advance(time.Hour)
	if page := dashboard(); strings.Contains(page, "Log out") || !strings.Contains(page, `id="token"`) {
		t.Error("an expired session still opens the dashboard")
	}
}

// TestSecureCookie: the session cookie is Secure when the client reached
// the service over TLS, as a trusted proxy says, and only then.
func TestSecureCookie(t *testing.T) {
	var loopback config.Prefixes
	loopback.Set("127.0.0.0/8,::1/128")
	for _, c := range []struct {
		proxies config.Prefixes
		secure  bool
	}{{loopback, true}, {nil, false}} {
		s := server(t, apitest.Config{TrustedProxies: c.proxies})
		req, _ := http.NewRequest("POST", s.URL+"/admin/login", strings.NewReader(url.Values{"token": {apitest.AdminToken}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-Proto", "https")
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if cookie := res.Header.Get("Set-Cookie"); res.StatusCode != http.StatusSeeOther || strings.Contains(cookie, "; Secure") != c.secure {
			t.Errorf("trusted proxies %v: %d, cookie %q, want Secure %v", c.proxies, res.StatusCode, cookie, c.secure)
		}
	}
}

// TestAdminDisabled: without an admin token /admin says how to enable it.
func TestAdminDisabled(t *testing.T) {
	s := server(t, apitest.Config{})
	pages := web.New(web.Deps{Auth: s.Auth, Telemetry: s.Telemetry, Signing: s.Signing}, web.Options{SessionTTL: time.Hour})
	mux := http.NewServeMux()
	for _, r := range pages.Routes() {
		mux.Handle(r.Method+" "+r.Path, r.Handler)
	}
	for _, c := range []struct{ method, path string }{{"GET", "/admin"}, {"POST", "/admin/login"}, {"GET", "/admin/usage"}} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
		if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "QUIRE_ADMIN_TOKEN") {
			t.Errorf("%s %s: %d %s", c.method, c.path, w.Code, w.Body)
		}
	}
}
