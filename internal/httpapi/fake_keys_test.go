package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
)

// TestFakeRegisterAndVerify: register answers the same JSON string
// whatever the address (DESIGN.md), verify the key as a JSON string that
// no cache keeps; their services' refusals are the answers: a wrong code
// 400 with its details, a mail relay that is down 503 with Retry-After.
func TestFakeRegisterAndVerify(t *testing.T) {
	t.Parallel()
	f := newFakes()
	a := f.serve(t)
	r := a.send("GET", "/v1/auth/register?email=ann@example.com", nil)
	var msg string
	if r.json(t, &msg); r.status != 200 || msg != "Check your email for verification code." || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("register: %d %s", r.status, r.body)
	}
	r = a.send("GET", "/v1/auth/verify?email=ann@example.com&code=123456", nil)
	if r.json(t, &msg); r.status != 200 || msg != "sd_for_ann@example.com_123456" || r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("verify: %d %v %s", r.status, r.header, r.body)
	}

	f.keys.registerErr = &quire.Error{Code: quire.CodeUnavailable, Message: "The mail relay does not answer.", RetryAfter: 30 * time.Second}
	f.keys.verifyErr = quire.Invalid("The code is not valid.", quire.Detail{Field: "code", Issue: "is wrong or expired"})
	a = f.serve(t)
	r = a.send("GET", "/v1/auth/register?email=ann@example.com", nil)
	if r.errorBody(t, 503, quire.CodeUnavailable); r.header.Get("Retry-After") != "30" {
		t.Errorf("mail down: Retry-After %q", r.header.Get("Retry-After"))
	}
	b := a.send("GET", "/v1/auth/verify?email=ann@example.com&code=000000", nil).errorBody(t, 400, quire.CodeValidation)
	if detail(t, b, "code") != "is wrong or expired" {
		t.Errorf("wrong code: %+v", b)
	}
	a.send("POST", "/v1/auth/register", nil).errorBody(t, 405, quire.CodeMethodNotAllowed)
}

// TestFakeCollect: /v1/collect answers 204 without a body once the
// service took the payload, with the license key of X-License-Key; a
// member of the wrong JSON type or broken JSON is 400 naming where, and
// counted as refused; over 64 KiB is 413; a service that cannot take it
// answers 503 with Retry-After.
func TestFakeCollect(t *testing.T) {
	t.Parallel()
	f := newFakes()
	a := f.serve(t)
	post := func(body string) response {
		return a.send("POST", "/v1/collect", strings.NewReader(body), "Content-Type", "application/json", "X-License-Key", "lic-1")
	}
	r := post(`{"superdocVersion":"2.0.0","EVENTS":[{"documentId":"d1","timestamp":"2026-11-22T10:00:00.000Z"}],"events":[{"documentId":"d2"}]}`)
	if r.status != 204 || len(r.body) != 0 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if got := f.telemetry.got[0]; got.LicenseKey != "lic-1" || got.SuperdocVersion != "2.0.0" || len(got.Events) != 1 || got.Events[0].DocumentID != "d2" {
		t.Errorf("the service got %+v: want names in any case, the last of duplicates", got)
	}
	for body, want := range map[string][2]string{
		`{"events":[{"documentId":5}]}`:                   {"events[0].documentId", "must be a string"},
		`{"events":{}}`:                                   {"events", "must be an array"},
		`{"browserInfo":{"screenSize":{"width":"wide"}}}`: {"browserInfo.screenSize.width", "must be a number"},
		`{"browserInfo":[]}`:                              {"browserInfo", "must be an object"},
		`{"events":[{"documentId":"d1"}`:                  {"events", ""},
		`{"libraryVersion":"1"} trailing`:                 {"body", ""},
		`{"events":[{"documentCreatedAt":true}]}`:         {"events[0].documentCreatedAt", "must be a string"},
	} {
		b := post(body).errorBody(t, 400, quire.CodeValidation)
		if got := detail(t, b, want[0]); !strings.Contains(got, want[1]) {
			t.Errorf("%s: %s: issue %q, want %q", body, want[0], got, want[1])
		}
	}
	if f.telemetry.refused != 7 || len(f.telemetry.got) != 1 {
		t.Errorf("%d refused, %d taken; want 7 and 1", f.telemetry.refused, len(f.telemetry.got))
	}
	post(`{"events":[{"documentId":"`+strings.Repeat("d", 64<<10)+`"}]}`).errorBody(t, 413, quire.CodePayloadTooLarge)
	f.telemetry.err = &quire.Error{Code: quire.CodeUnavailable, Message: "The intake queue is full.", RetryAfter: time.Second}
	if r := post(`{"events":[{"documentId":"d3"}]}`); r.errorBody(t, 503, quire.CodeUnavailable).Message == "" || r.header.Get("Retry-After") != "1" {
		t.Errorf("full queue: Retry-After %q", r.header.Get("Retry-After"))
	}
}

// TestFakeUsageAccess: GET /v1/usage is read with the admin token (every
// license) or an API key (the licenses of its e-mail, and only those:
// another is 403, none at all 403, no credential 401), as JSON or CSV;
// a bad range is 400.
func TestFakeUsageAccess(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.telemetry.own = []string{"lic-1", "lic-2"}
	a := f.serve(t)
	get := func(query, token string, header ...string) response {
		return a.send("GET", "/v1/usage"+query, nil, append([]string{"Authorization", "Bearer " + token}, header...)...)
	}
	if r := get("?groupBy=day", fakeAdmin); r.status != 200 || f.telemetry.asked.Keys != nil || f.telemetry.asked.ByMonth {
		t.Errorf("admin: %d %s, asked %+v", r.status, r.body, f.telemetry.asked)
	}
	if r := get("", goodKey); r.status != 200 || strings.Join(f.telemetry.asked.Keys, ",") != "lic-1,lic-2" {
		t.Errorf("a key's own: %d %s, asked %+v", r.status, r.body, f.telemetry.asked)
	}
	r := get("?licenseKey=lic-2", goodKey, "Accept", "text/csv")
	if r.status != 200 || r.header.Get("Content-Type") != "text/csv; charset=utf-8" || !strings.Contains(string(r.body), "lic-2") || strings.Contains(string(r.body), "lic-1") {
		t.Errorf("CSV of one license: %d %v %s", r.status, r.header, r.body)
	}
	get("?licenseKey=lic-9", goodKey).errorBody(t, 403, quire.CodeForbidden)
	get("", "qk_wrong").errorBody(t, 401, quire.CodeAuthentication)
	a.send("GET", "/v1/usage", nil).errorBody(t, 401, quire.CodeAuthentication)
	b := get("?from=yesterday", fakeAdmin).errorBody(t, 400, quire.CodeValidation)
	if detail(t, b, "from") == "" {
		t.Errorf("bad from: %+v", b)
	}
	get("?groupBy=week", fakeAdmin).errorBody(t, 400, quire.CodeValidation)

	f.telemetry.own = nil
	get("", goodKey).errorBody(t, 403, quire.CodeForbidden)
}

// TestFakeAPIUsage: GET /v1/usage/api gives every key's metering to the
// admin token and a key's own to the key (docs/api.md, "API usage"), as
// JSON or CSV; a range that is empty is 400, a wrong key 401.
func TestFakeAPIUsage(t *testing.T) {
	t.Parallel()
	f := newFakes()
	f.usage = &fakeUsage{}
	a := f.serve(t)
	get := func(query, token string, header ...string) response {
		return a.send("GET", "/v1/usage/api"+query, nil, append([]string{"Authorization", "Bearer " + token}, header...)...)
	}
	window := "?from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z"
	var rep struct {
		GroupBy string
		Keys    []struct {
			KeyID   string
			Periods []struct {
				Operations struct{ Sign struct{ Requests int } }
			}
		}
	}
	r := get(window, fakeAdmin)
	if r.json(t, &rep); r.status != 200 || len(rep.Keys) != 2 || rep.GroupBy != "month" || rep.Keys[0].Periods[0].Operations.Sign.Requests != 1 {
		t.Errorf("admin: %d %s", r.status, r.body)
	}
	r = get(window+"&groupBy=day", goodKey)
	if r.json(t, &rep); r.status != 200 || len(rep.Keys) != 1 || rep.Keys[0].KeyID != fakeKey.ID || rep.GroupBy != "day" {
		t.Errorf("a key's own: %d %s", r.status, r.body)
	}
	r = get(window, goodKey, "Accept", "text/csv")
	if r.status != 200 || !strings.HasPrefix(string(r.body), "keyId,email,periodStart,operation,") || strings.Contains(string(r.body), "k2") {
		t.Errorf("CSV: %d %s", r.status, r.body)
	}
	b := get("?from=2026-12-01T00:00:00Z&to=2026-11-01T00:00:00Z", fakeAdmin).errorBody(t, 400, quire.CodeValidation)
	if detail(t, b, "to") != "must be after from" {
		t.Errorf("empty range: %+v", b)
	}
	get("?groupBy=year", fakeAdmin).errorBody(t, 400, quire.CodeValidation)
	get(window, "qk_wrong").errorBody(t, 401, quire.CodeAuthentication)
}
