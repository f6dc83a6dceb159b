package httpapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func withKeyLimits(l keylimit.Limits) envOption {
	return func(c *apitest.Config) { c.KeyLimits = l }
}

// tooMany checks a 429 of the per-key limits: the error body, Retry-After
// (at least min seconds) and the RateLimit fields.
func tooMany(t *testing.T, r response, minRetry int) {
	t.Helper()
	b := r.errorBody(t, http.StatusTooManyRequests, quire.CodeRateLimit)
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < minRetry {
		t.Errorf("Retry-After %q, want at least %d; %s", r.header.Get("Retry-After"), minRetry, b.Message)
	}
	if r.header.Get("RateLimit-Policy") == "" || r.header.Get("RateLimit") == "" {
		t.Errorf("429 without the RateLimit fields: %v", r.header)
	}
}

func TestKeyRateLimit(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(),
		withKeyLimits(keylimit.Limits{Rate: ratelimit.Rate{N: 2, Per: time.Minute}}))
	key := e.key("ann@example.com")
	body := signBody(inline(pdftest.OnePage("rated")))
	for i := range 2 {
		r := e.signPDF(key, body)
		signedPDF(t, r)
		if got, want := r.header.Get("RateLimit-Policy"), `"rate";q=2;w=60`; got != want {
			t.Errorf("RateLimit-Policy %q, want %q", got, want)
		}
		if got := r.header.Get("RateLimit"); !regexp.MustCompile(`^"rate";r=` + strconv.Itoa(1-i) + `;t=\d+$`).MatchString(got) {
			t.Errorf("answer %d: RateLimit %q", i, got)
		}
	}
	r := e.signPDF(key, body)
	tooMany(t, r, 1)
	if !strings.HasPrefix(r.header.Get("RateLimit"), `"rate";r=0;`) {
		t.Errorf("RateLimit %q after the last token", r.header.Get("RateLimit"))
	}
	// The rate is per key; a verify with the key counts against it, one
	// without a key does not.
	other := e.key("bob@example.com")
	signedPDF(t, e.signPDF(other, body))
	verify := func(key string) response {
		h := map[string]string{"Content-Type": "application/json"}
		if key != "" {
			h["Authorization"] = "Bearer " + key
		}
		return e.do("POST", "/v1/verify", strings.NewReader(`{"document":`+inline(pdftest.OnePage("v"))+`}`), h)
	}
	if r := verify(other); r.status != 200 || r.header.Get("RateLimit") == "" {
		t.Errorf("verify with a key: %d %v", r.status, r.header)
	}
	tooMany(t, verify(other), 1)
	if r := verify(""); r.status != 200 || r.header.Get("RateLimit") != "" {
		t.Errorf("anonymous verify: %d %v", r.status, r.header)
	}
	verify("sd_notakey").errorBody(t, 401, quire.CodeAuthentication)
}

func TestKeyConcurrencyLimit(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withPrivateFetch(),
		withKeyLimits(keylimit.Limits{Concurrent: 1}))
	key := e.key("ann@example.com")
	slow, arrived, release := heldDocument(t)
	first := make(chan response)
	go func() { first <- e.signPDF(key, signBody(`{"url":"`+slow+`/doc.pdf"}`)) }()
	<-arrived // the first request is in progress
	r := e.signPDF(key, signBody(inline(pdftest.OnePage("second"))))
	tooMany(t, r, 1)
	if got, want := r.header.Get("RateLimit-Policy"), `"concurrency";q=1;qu="concurrent-requests"`; got != want {
		t.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
	if got := r.header.Get("RateLimit"); got != `"concurrency";r=0` {
		t.Errorf("RateLimit %q", got)
	}
	release()
	signedPDF(t, <-first)
	signedPDF(t, e.signPDF(key, signBody(inline(pdftest.OnePage("third")))))
}

// A request of a key in progress on one instance counts against the key's
// requests at once on the others sharing its PostgreSQL database: with a
// limit of one, a request on instance b is refused at once with the
// documented 429 while instance a's is in progress, and admitted once
// that request has ended (its row in the database gone).
func TestKeyConcurrencyAcrossInstances(t *testing.T) {
	u := storetest.URL(t, "postgres")
	_, b, key, release, first := inProgressOnA(t, storetest.Open(t, u), withPrivateFetch(), withKeyLimits(keylimit.Limits{Concurrent: 1}))
	body := signBody(inline(pdftest.OnePage("b")))
	r := b.signPDF(key, body)
	tooMany(t, r, 1)
	if msg := r.errorBody(t, 429, quire.CodeRateLimit).Message; msg != "Too many requests in progress: at most 1 at once for this API key. Try again when one has finished." {
		t.Errorf("message %q", msg)
	}
	if got, want := r.header.Get("Retry-After"), "1"; got != want {
		t.Errorf("Retry-After %q, want %q", got, want)
	}
	if got, want := r.header.Get("RateLimit-Policy"), `"concurrency";q=1;qu="concurrent-requests"`; got != want {
		t.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
	if got := r.header.Get("RateLimit"); got != `"concurrency";r=0` {
		t.Errorf("RateLimit %q", got)
	}
	release()
	signedPDF(t, <-first)
	// Instance a deletes its request's row as the request ends, which may
	// be just after its client has the whole answer; b's refused request
	// left none.
	noneInProgress(t, u)
	r = b.signPDF(key, body)
	signedPDF(t, r)
	if got := r.header.Get("RateLimit"); got != `"concurrency";r=0` {
		t.Errorf("RateLimit %q of the one request in progress", got)
	}
}

// A request whose client leaves ends, and with it its row in the database:
// its key's place is free on the other instances.
func TestKeyConcurrencyFreedWhenTheClientLeaves(t *testing.T) {
	u := storetest.URL(t, "postgres")
	db := storetest.Open(t, u)
	options := []envOption{withPrivateFetch(), withKeyLimits(keylimit.Limits{Concurrent: 1})}
	a, b := newEnv(t, db, unlimited(), options...), newEnv(t, db, unlimited(), options...)
	key := a.key("ann@example.com")
	slow, arrived, _ := heldDocument(t) // held until the test ends
	ctx, leave := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, "POST", a.URL+"/v1/sign", strings.NewReader(signBody(`{"url":"`+slow+`/doc.pdf"}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	gone := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		gone <- err
	}()
	<-arrived // instance a's request is in progress
	body := signBody(inline(pdftest.OnePage("b")))
	tooMany(t, b.signPDF(key, body), 1)
	leave()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the client that left: %v", err)
	}
	noneInProgress(t, u)
	signedPDF(t, b.signPDF(key, body))
}

// noneInProgress waits until the database at u has no request of a key in
// progress (its instances delete a request's row as it ends).
func noneInProgress(t *testing.T, u string) {
	t.Helper()
	raw := storetest.SQL(t, u)
	inProgress := func() (n int) {
		if err := raw.QueryRow(`SELECT COUNT(*) FROM key_requests`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); inProgress() != 0; <-time.After(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests still in progress in the database after 10 s", inProgress())
		}
	}
}

// heldDocument serves a one-page PDF at url, holding each request until
// release (which may be called more than once, and is called when the
// test ends, before the server closes); arrived is closed when the first
// request comes.
// inProgressOnA starts two instances, a and b, on db, and on a a request
// of a new key that stays in progress until release is called; first
// gives its answer then.
func inProgressOnA(t *testing.T, db *store.DB, options ...envOption) (a, b *env, key string, release func(), first <-chan response) {
	a, b = newEnv(t, db, unlimited(), options...), newEnv(t, db, unlimited(), options...)
	key = a.key("ann@example.com")
	slow, arrived, release := heldDocument(t)
	answer := make(chan response)
	go func() { answer <- a.signPDF(key, signBody(`{"url":"`+slow+`/doc.pdf"}`)) }()
	<-arrived
	return a, b, key, release, answer
}

func heldDocument(t *testing.T) (url string, arrived <-chan struct{}, release func()) {
	came, held := make(chan struct{}), make(chan struct{})
	first := sync.OnceFunc(func() { close(came) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		first()
		<-held
		w.Write(pdftest.OnePage("slow"))
	}))
	release = sync.OnceFunc(func() { close(held) })
	t.Cleanup(srv.Close)
	t.Cleanup(release) // cleanups run last first: the request held ends before Close waits for it
	return srv.URL, came, release
}

func TestKeyQuotaAndOverrides(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(),
		withKeyLimits(keylimit.Limits{Quota: 2}))
	now, monthEnd := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	e.Clock.Set(now)
	ann, bob := e.key("ann@example.com"), e.key("bob@example.com")
	keys, err := e.Auth.Keys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Bob's key by its address: keys made in the same instant of the
	// test's clock are listed in no set order.
	i := slices.IndexFunc(keys, func(k quire.APIKey) bool { return k.Email == "bob@example.com" })
	if i < 0 {
		t.Fatalf("no key of bob's in %v", keys)
	}
	three := int64(3)
	if err := e.DB.SetKeyLimits(t.Context(), quire.KeyLimits{KeyID: keys[i].ID, Quota: &three, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Set(now.Add(keylimit.Refresh)) // every instance has it by now
	body := signBody(inline(pdftest.OnePage("quota")))
	for i := range 2 {
		r := e.signPDF(ann, body)
		signedPDF(t, r)
		if got, want := r.header.Get("RateLimit"), `"quota";r=`+strconv.Itoa(1-i)+`;t=`+strconv.Itoa(int(monthEnd.Sub(now.Add(keylimit.Refresh)).Seconds())); got != want {
			t.Errorf("answer %d: RateLimit %q, want %q", i, got, want)
		}
	}
	r := e.signPDF(ann, body)
	tooMany(t, r, int(monthEnd.Sub(now.Add(keylimit.Refresh)).Seconds()))
	if !strings.Contains(r.header.Get("RateLimit-Policy"), `"quota";q=2;w=`+strconv.Itoa(30*86400)) {
		t.Errorf("RateLimit-Policy %q", r.header.Get("RateLimit-Policy"))
	}
	for range 3 {
		signedPDF(t, e.signPDF(bob, body)) // the override: 3
	}
	tooMany(t, e.signPDF(bob, body), 1)
	// A new month, a new quota.
	e.Clock.Set(monthEnd.Add(5 * time.Second))
	signedPDF(t, e.signPDF(ann, body))
}

// Requests of one key arriving at once on two instances near its quota:
// exactly the quota's documents are answered, whether the count commits in
// the signing's transaction (sign) or in a group commit (verify); the rest
// are 429 with the headers, and nothing of theirs is counted.
func TestKeyQuotaExactAcrossInstances(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		const quota, requests = 9, 40
		lim := withKeyLimits(keylimit.Limits{Quota: quota})
		a, b := newEnv(t, db, unlimited(), lim), newEnv(t, db, unlimited(), lim)
		now, monthEnd := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		a.Clock.Set(now)
		b.Clock.Set(now)
		key := a.key("ann@example.com")
		sign := signBody(inline(pdftest.OnePage("quota")))
		verify := `{"document":` + inline(pdftest.OnePage("v")) + `}`
		var ok, limited atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range requests {
			wg.Go(func() {
				base, path, body := a.URL, "/v1/sign", sign
				if i%2 == 1 {
					base = b.URL
				}
				if i%4 >= 2 {
					path, body = "/v1/verify", verify
				}
				req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				<-start
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer res.Body.Close()
				switch res.StatusCode {
				case 200:
					ok.Add(1)
				case 429:
					limited.Add(1)
					if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || s < 1 ||
						!strings.Contains(res.Header.Get("RateLimit-Policy"), `"quota";q=9`) || !strings.Contains(res.Header.Get("RateLimit"), `"quota";r=`) {
						t.Errorf("429 without its headers: %v", res.Header)
					}
				default:
					b, _ := io.ReadAll(res.Body)
					t.Errorf("%s: %d %s", path, res.StatusCode, b)
				}
			})
		}
		close(start)
		wg.Wait()
		if ok.Load() != quota || limited.Load() != requests-quota {
			t.Errorf("answered %d and refused %d, want exactly %d and %d", ok.Load(), limited.Load(), quota, requests-quota)
		}
		month := quire.Month(now)
		keys, err := a.Auth.Keys(t.Context())
		if err != nil || len(keys) != 1 {
			t.Fatal(keys, err)
		}
		if n, err := db.MonthDocuments(t.Context(), keys[0].ID, month); err != nil || n != quota {
			t.Errorf("month's documents %d (%v), want %d", n, err, quota)
		}
		r := a.signPDF(key, sign)
		tooMany(t, r, int(monthEnd.Sub(now).Seconds())) // used up: until the month ends
		if !strings.Contains(r.header.Get("RateLimit"), `"quota";r=0;`) {
			t.Errorf("RateLimit %q when used up", r.header.Get("RateLimit"))
		}
	})
}

// A request of a key in progress on one instance holds its quota on the
// others: with a quota of one document, a request on instance b is
// refused at once (the documented 429) while instance a's is in progress.
// When instance a crashes, its hold ends with its lease: b's requests are
// admitted again, and the quota stays exact (a's answer, if it still
// comes, is refused when counted).
func TestKeyQuotaHeldAcrossInstances(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		a, b, key, release, first := inProgressOnA(t, db, withPrivateFetch(), withKeyLimits(keylimit.Limits{Quota: 1}),
			withSettings(func(c *config.Config) { c.JobLease = time.Second }))
		body := signBody(inline(pdftest.OnePage("b")))
		r := b.signPDF(key, body)
		tooMany(t, r, 1)
		if msg := r.errorBody(t, 429, quire.CodeRateLimit).Message; !strings.Contains(msg, "held by its requests in progress") {
			t.Errorf("message %q", msg)
		}
		if got := r.header.Get("RateLimit"); !strings.HasPrefix(got, `"quota";r=1;t=`) {
			t.Errorf("RateLimit %q: nothing used yet", got)
		}
		a.Limits.Close() // instance a "crashes": its lease is renewed no more
		for deadline := time.Now().Add(10 * time.Second); r.status == 429 && time.Now().Before(deadline); r = b.signPDF(key, body) {
			<-time.After(20 * time.Millisecond) // the poll's pace: the lease expires by the database's clock
		}
		signedPDF(t, r)
		release()
		tooMany(t, <-first, 1) // counted after the quota was used up: refused
		keys, err := a.Auth.Keys(t.Context())
		if err != nil || len(keys) != 1 {
			t.Fatal(keys, err)
		}
		if n, err := db.MonthDocuments(t.Context(), keys[0].ID, quire.Month(a.Clock.Now())); err != nil || n != 1 {
			t.Errorf("month's documents %d (%v), want 1", n, err)
		}
	})
}

func TestAPIUsageReport(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited())
		e.Clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
		ann, bob := e.key("ann@example.com"), e.key("bob@example.com")
		in := pdftest.OnePage("metered")
		body := signBody(inline(in))
		signedPDF(t, e.signPDF(ann, body))
		signed := signedPDF(t, e.signPDF(ann, body))
		signedPDF(t, e.signPDF(bob, body))
		e.signPDF(ann, `{"document":{"base64":"bm9wZQ=="}}`).errorBody(t, 400, quire.CodeValidation) // not counted
		vbody, ctype := multipartFile("file", "signed.pdf", signed)
		if r := e.do("POST", "/v1/verify", bytes.NewReader(vbody), map[string]string{"Content-Type": ctype, "Authorization": "Bearer " + ann}); r.status != 200 {
			t.Fatalf("verify: %d %s", r.status, r.body)
		}
		e.verifyPDF(signed) // anonymous: not counted

		admin := map[string]string{"Authorization": "Bearer " + adminToken}
		r := e.do("GET", "/v1/usage/api?groupBy=day&from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z", nil, admin)
		var rep metering.Report
		if r.json(t, &rep); r.status != 200 || rep.GroupBy != "day" || len(rep.Keys) != 2 {
			t.Fatalf("admin report: %d %s", r.status, r.body)
		}
		a := rep.Keys[0]
		if a.Email != "ann@example.com" {
			a = rep.Keys[1]
		}
		if len(a.Periods) != 1 || !a.Periods[0].Start.Equal(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("ann's periods: %+v", a.Periods)
		}
		ops := a.Periods[0].Operations
		if s := ops.Sign; s.Requests != 2 || s.Documents != 2 || s.Pages != 2 || s.InputBytes != 2*int64(len(body)) || s.EngineSeconds <= 0 {
			t.Errorf("ann's signings: %+v (body %d bytes)", s, len(body))
		}
		if v := ops.Verify; v.Requests != 1 || v.Documents != 1 || v.Pages != 0 || v.InputBytes <= int64(len(signed)) {
			t.Errorf("ann's verifications: %+v", v)
		}
		if ops.Convert != (quire.OperationUsage{}) || ops.Annotate != (quire.OperationUsage{}) {
			t.Errorf("ann's other operations: %+v", ops)
		}
		for _, k := range []string{"convert", "sign", "annotate", "verify", "pdf"} {
			if !strings.Contains(string(r.body), `"`+k+`":{"requests":`) {
				t.Errorf("the JSON lacks operation %s: %s", k, r.body)
			}
		}

		// A key reads its own usage only.
		r = e.do("GET", "/v1/usage/api?groupBy=month", nil, map[string]string{"Authorization": "Bearer " + bob})
		if r.json(t, &rep); r.status != 200 || len(rep.Keys) != 1 || rep.Keys[0].Email != "bob@example.com" || rep.Keys[0].Periods[0].Operations.Sign.Requests != 1 {
			t.Errorf("bob's report: %d %s", r.status, r.body)
		}
		e.do("GET", "/v1/usage/api", nil, nil).errorBody(t, 401, quire.CodeAuthentication)
		e.do("GET", "/v1/usage/api?groupBy=week", nil, admin).errorBody(t, 400, quire.CodeValidation)

		admin["Accept"] = "text/csv"
		r = e.do("GET", "/v1/usage/api?groupBy=month", nil, admin)
		lines, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
		if err != nil || r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") || len(lines) != 1+2*len(quire.Operations) {
			t.Fatalf("CSV: %d %v %s", r.status, err, r.body)
		}
		if strings.Join(lines[0], ",") != "keyId,email,periodStart,operation,requests,documents,pages,inputBytes,engineSeconds" {
			t.Errorf("CSV header %v", lines[0])
		}
		found := false
		for _, l := range lines[1:] {
			if l[1] == "ann@example.com" && l[2] == "2026-11-01T00:00:00Z" && l[3] == "sign" && l[4] == "2" && l[5] == "2" && l[6] == "2" {
				found = true
			}
		}
		if !found {
			t.Errorf("no CSV line of ann's signings: %v", lines)
		}
	})
}
