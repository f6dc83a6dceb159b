package web_test

import (
	"context"
	"encoding/base64"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// admin is an operator's HTTP client with a session of the dashboard.
type admin struct {
	t      *testing.T
	base   string
	client *http.Client
	cookie *http.Cookie
	csrf   string
}

func loggedIn(t *testing.T, s *apitest.Server) *admin {
	a := &admin{t: t, base: s.URL, client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	res := a.send("POST", "/admin/login", url.Values{"token": {apitest.AdminToken}})
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) == 0 {
		t.Fatalf("login: %d", res.StatusCode)
	}
	a.cookie = res.Cookies()[0]
	_, page := a.get("/admin")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the dashboard:\n%s", page)
	}
	a.csrf = m[1]
	return a
}

// send sends a form (a GET without one) and returns the answer, its body read.
func (a *admin) send(method, path string, form url.Values) *http.Response {
	a.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, a.base+path, body)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if a.cookie != nil {
		req.AddCookie(a.cookie)
	}
	res, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	res.Body = io.NopCloser(strings.NewReader(string(b)))
	return res
}

func (a *admin) get(path string) (int, string) {
	res := a.send("GET", path, nil)
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// limits posts the limits form of the dashboard.
func (a *admin) limits(fields ...string) (int, string) {
	form := url.Values{"csrf": {a.csrf}}
	for i := 0; i+1 < len(fields); i += 2 {
		form.Set(fields[i], fields[i+1])
	}
	res := a.send("POST", "/admin/keys/limits", form)
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, html.UnescapeString(string(b))
}

func verify(t *testing.T, s *apitest.Server, key string) *http.Response {
	t.Helper()
	body := `{"document":{"base64":"` + base64.StdEncoding.EncodeToString(pdftest.OnePage("metered")) + `"}}`
	req, _ := http.NewRequest("POST", s.URL+"/v1/verify", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// TestAdminAPIUsageAndLimits: the usage page shows what the metering
// counted of requests made here; the dashboard's limits form sets and
// clears a key's overrides, which the limits then enforce, and refuses
// bad values without changing anything.
func TestAdminAPIUsageAndLimits(t *testing.T) {
	s := server(t, apitest.Config{})
	other := apitest.Start(t, s.DB, apitest.Config{}) // a second instance on the same database
	// Both clocks at one time early in an hour, so that the rate's window
	// of an hour holds for the whole test.
	t0 := time.Now().UTC().Truncate(time.Hour).Add(10 * time.Minute)
	s.Clock.Set(t0)
	other.Clock.Set(t0)
	ctx := context.Background()
	key, rec, err := s.Auth.CreateKey(ctx, "carol@example.com")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if res := verify(t, s, key); res.StatusCode != http.StatusOK {
			t.Fatalf("verify: %d", res.StatusCode)
		}
	}

	// Without a session: no usage, and the form changes nothing.
	anonymous := &admin{t: t, base: s.URL, client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if res := anonymous.send("GET", "/admin/usage", nil); res.StatusCode != http.StatusSeeOther {
		t.Errorf("usage without a session: %d, want 303 to the login", res.StatusCode)
	}
	if st, _ := anonymous.limits("id", rec.ID, "rate", "1/1m"); st != http.StatusForbidden {
		t.Errorf("limits form without a session: %d, want 403", st)
	}
	a := loggedIn(t, s)
	if res := a.send("POST", "/admin/keys/limits", url.Values{"id": {rec.ID}, "rate": {"1/1m"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("limits form without the CSRF token: %d, want 403", res.StatusCode)
	}
	if o, _ := s.Limits.Overrides(ctx); len(o) != 0 {
		t.Fatalf("refused forms stored overrides: %+v", o)
	}

	// The table has the metered numbers, the chart the requests.
	today := s.Clock.Now().UTC().Format("2006-01-02")
	st, page := a.get("/admin/usage?from=" + today + "&to=" + today)
	if st != http.StatusOK {
		t.Fatalf("usage page: %d\n%s", st, page)
	}
	q, _ := metering.ParseQuery("", "", "month", s.Clock.Now())
	rep, err := metering.Build(ctx, s.DB, q)
	if err != nil || len(rep.Keys) != 1 || len(rep.Keys[0].Periods) != 1 {
		t.Fatalf("metering report %+v, %v", rep, err)
	}
	v := rep.Keys[0].Periods[0].Operations.Verify
	if v.Requests != 3 || v.Documents != 3 || v.InputBytes == 0 {
		t.Fatalf("metered verifications %+v, want 3 requests of 3 documents", v)
	}
	row := regexp.MustCompile(`<tr data-key="` + rec.ID + `" data-op="verify">(.*?)</tr>`).FindStringSubmatch(page)
	want := "<td><code>" + rec.ID + "</code></td><td>carol@example.com</td><td>verify</td><td>3</td><td>3</td><td>0</td><td>" +
		strconv.FormatInt(v.InputBytes, 10) + "</td><td>"
	if row == nil || !strings.HasPrefix(row[1], want) {
		t.Errorf("the usage table's verify row of %s is %q, want it to start %q", rec.ID, row, want)
	}
	if !strings.Contains(page, "<title>"+today+": 3 requests of "+rec.ID+"</title>") || !strings.Contains(page, `class="bar k0"`) {
		t.Errorf("the API chart lacks today's 3 requests of %s:\n%s", rec.ID, page)
	}
	_, dash := a.get("/admin")
	if !regexp.MustCompile(`<td class="month">3</td>`).MatchString(dash) {
		t.Errorf("the dashboard does not show the key's 3 documents this month")
	}

	// Bad values are refused with the CLI's texts; nothing is stored.
	for _, c := range []struct{ field, value, text string }{
		{"rate", "fast", `rate "fast": want N/DURATION such as 5/1h, or 0 for unlimited`},
		{"quota", "12", `quota "12": want N/month such as 10000/month, or 0 for none`},
		{"concurrent", "-1", `concurrent "-1": want a whole number of requests, or 0 for no limit`},
	} {
		st, page := a.limits("id", rec.ID, "rate", "5/1m", c.field, c.value)
		if st != http.StatusBadRequest || !strings.Contains(page, c.text) {
			t.Errorf("%s %q: %d, want 400 saying %q", c.field, c.value, st, c.text)
		}
	}
	if st, page := a.limits("id", "key_nope", "rate", "5/1m"); st != http.StatusNotFound || !strings.Contains(page, `There is no key with id "key_nope".`) {
		t.Errorf("unknown key: %d", st)
	}
	if o, _ := s.Limits.Overrides(ctx); len(o) != 0 {
		t.Fatalf("refused forms stored overrides: %+v", o)
	}

	// A rate of 2 an hour, set with the form: stored, shown, enforced at
	// once by this instance and within keylimit.Refresh by the other one,
	// which shares the count.
	if res := verify(t, other, key); res.StatusCode != http.StatusOK { // it has read the overrides: none
		t.Fatalf("verify on the other instance: %d", res.StatusCode)
	}
	if st, _ := a.limits("id", rec.ID, "rate", "2/1h", "quota", "100/month"); st != http.StatusSeeOther {
		t.Fatalf("setting the rate: %d, want 303", st)
	}
	o, err := s.Limits.Overrides(ctx)
	if l := o[rec.ID]; err != nil || l.Rate == nil || *l.Rate != 2 || l.RatePer != time.Hour || l.Quota == nil || *l.Quota != 100 || l.Concurrent != nil {
		t.Fatalf("stored overrides %+v, %v", o, err)
	}
	if _, dash := a.get("/admin"); !strings.Contains(dash, `placeholder="2/1h"`) || !strings.Contains(dash, `<td class="month">4 of 100</td>`) {
		t.Errorf("the dashboard does not show the new limits")
	}
	for i := range 2 {
		if res := verify(t, s, key); res.StatusCode != http.StatusOK {
			t.Fatalf("verify %d under the new rate: %d", i, res.StatusCode)
		}
	}
	if res := verify(t, s, key); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Errorf("third verify in the hour: %d, want 429 with Retry-After", res.StatusCode)
	}
	other.Clock.Advance(keylimit.Refresh)
	if res := verify(t, other, key); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the other instance, %s later: %d, want 429", keylimit.Refresh, res.StatusCode)
	}

	// Cleared: the defaults (no limits on the test server) apply again.
	if st, _ := a.limits("id", rec.ID, "clear", "1"); st != http.StatusSeeOther {
		t.Fatalf("clearing: %d", st)
	}
	if o, _ := s.Limits.Overrides(ctx); len(o) != 0 {
		t.Errorf("overrides after clearing: %+v", o)
	}
	if res := verify(t, s, key); res.StatusCode != http.StatusOK {
		t.Errorf("verify after clearing: %d", res.StatusCode)
	}
}
