package httpapi_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
	"github.com/quire-dev/quire/internal/telemetry"
	"github.com/quire-dev/quire/internal/telemetry/telemetrytest"
)

// deployedPayload is what the editor library deployed today really sends.
func deployedPayload(docID string) string {
	return `{"superdocVersion":"1.46.3","browserInfo":{"userAgent":"","currentUrl":"","hostname":"","screenSize":{"width":0,"height":0}},
		"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"` + docID + `","documentCreatedAt":null}]}`
}

func (e *env) collect(body, licenseKey string) response {
	e.t.Helper()
	h := map[string]string{"Content-Type": "application/json", "Origin": "https://editor.example"}
	if licenseKey != "-" {
		h["X-License-Key"] = licenseKey
	}
	return e.do("POST", "/v1/collect", strings.NewReader(body), h)
}

func (e *env) report(query string, bearer string) telemetry.Report {
	e.t.Helper()
	r := e.do("GET", "/v1/usage?"+query, nil, map[string]string{"Authorization": "Bearer " + bearer})
	if r.status != 200 {
		e.t.Fatalf("usage: %d %s", r.status, r.body)
	}
	var rep telemetry.Report
	r.json(e.t, &rep)
	return rep
}

func license(rep telemetry.Report, key string) *telemetry.LicenseUsage {
	for i := range rep.Licenses {
		if rep.Licenses[i].LicenseKey == key {
			return &rep.Licenses[i]
		}
	}
	return nil
}

func totals(l *telemetry.LicenseUsage) (newDocs, active, opens int64) {
	for _, p := range l.Periods {
		newDocs, active, opens = newDocs+p.NewDocuments, active+p.ActiveDocuments, opens+p.Opens
	}
	return
}

func TestCollectCountsEachDocumentOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited())
		for _, doc := range []string{"HASH-0000ABCD", "HASH-0000ABCD", "HASH-11112222"} {
			r := e.collect(deployedPayload(doc), "")
			if r.status != 204 || len(r.body) != 0 || r.header.Get("Access-Control-Allow-Origin") != "*" {
				t.Fatalf("collect = %d %q, CORS %q", r.status, r.body, r.header.Get("Access-Control-Allow-Origin"))
			}
		}
		if strings.Contains(e.Logs.String(), "/v1/collect") {
			t.Error("successful collect requests are logged one by one")
		}
		e.collect(deployedPayload("HASH-0000ABCD"), "-") // no header at all: community too
		e.collect(deployedPayload("HASH-0000ABCD"), "ql_unknown")

		rep := e.report("", adminToken)
		c := license(rep, quire.CommunityLicenseKey)
		if c == nil || !c.Community || c.Registered || c.Organization != nil || len(c.Periods) != 1 {
			t.Fatalf("community usage %+v", c)
		}
		if n, a, o := totals(c); n != 2 || a != 2 || o != 4 {
			t.Errorf("community: new %d, active %d, opens %d; want 2, 2, 4", n, a, o)
		}
		u := license(rep, "ql_unknown")
		if u == nil || u.Registered || u.Community {
			t.Fatalf("unregistered key %+v", u)
		}
		if n, _, o := totals(u); n != 1 || o != 1 {
			t.Errorf("unregistered key counted %d documents, %d opens", n, o)
		}
	})
}

var screenWidth = regexp.MustCompile(`(^|\D)1280(\D|$)`)

func TestCollectStoresNoPersonalData(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends {
		t.Run(b, func(t *testing.T) {
			u := storetest.URL(t, b)
			e := newEnv(t, storetest.Open(t, u), unlimited())
			body := `{"libraryVersion":"2.0.0","browserInfo":{"userAgent":"Mozilla/5.0 SECRET-UA","currentUrl":"https://docs.example.com/private/path?user=ann",
				"hostname":"docs.example.com","screenSize":{"width":1280,"height":800}},"metadata":{"customer":"acme"},"futureField":{"x":1},
				"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"HASH-1","documentCreatedAt":"2024-01-15T10:30:00Z","extra":true}]}`
			r := e.do("POST", "/v1/collect", strings.NewReader(body), map[string]string{"Content-Type": "application/json",
				"X-License-Key": "ql_acme", "Cookie": "session=COOKIE-VALUE", "X-Forwarded-For": "198.51.100.77"})
			if r.status != 204 {
				t.Fatalf("collect = %d %s", r.status, r.body)
			}
			row := dumpEvents(t, u)
			for _, want := range []string{"ql_acme", "HASH-1", "2.0.0", "docs.example.com", `{"customer":"acme"}`, "2024-01-15T10:30:00Z", "2026-11-22T09:34:00.123Z"} {
				if !strings.Contains(row, want) {
					t.Errorf("stored event lacks %s: %s", want, row)
				}
			}
			for _, never := range []string{"SECRET-UA", "private", "COOKIE", "198.51.100.77", "127.0.0.1", "screen", "width"} {
				if strings.Contains(row, never) {
					t.Errorf("stored event holds %s: %s", never, row)
				}
			}
			// The screen's width as a number of its own: the digits may occur
			// inside another number (the time received, in ms) by chance.
			if screenWidth.MatchString(row) {
				t.Errorf("stored event holds the screen's width: %s", row)
			}

			big := `{"metadata":{"blob":"` + strings.Repeat("x", 300) + `"},"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"HASH-2"}]}`
			if r := e.collect(big, ""); r.status != 204 {
				t.Fatalf("large metadata = %d %s", r.status, r.body)
			}
			if row := dumpEvents(t, u); !strings.Contains(row, `{"truncated":true}`) || strings.Contains(row, "xxxx") {
				t.Errorf("metadata over the cap is not replaced: %s", row)
			}
		})
	}
}

// dumpEvents returns every stored raw event as text.
func dumpEvents(t *testing.T, url string) string {
	t.Helper()
	rows, err := storetest.SQL(t, url).Query(`SELECT license_key, document_id, received_at, occurred_at,
		COALESCE(document_created_at, ''), library_version, hostname, metadata FROM telemetry_events`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		v := make([]any, 8)
		for i := range v {
			v[i] = new(any)
		}
		if err := rows.Scan(v...); err != nil {
			t.Fatal(err)
		}
		for _, x := range v {
			fmt.Fprintf(&b, "%s|", *(x.(*any)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestCollectValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	ev := func(fields string) string { return `{"events":[{` + fields + `}]}` }
	many := `{"events":[` + strings.TrimSuffix(strings.Repeat(`{"timestamp":"2026-11-22T09:34:00Z","documentId":"d"},`, 101), ",") + `]}`
	for _, c := range []struct{ body, field string }{
		{`{}`, "events"},
		{`{"events":[]}`, "events"},
		{many, "events"},
		{ev(`"timestamp":"2026-11-22T09:34:00Z","documentId":"` + strings.Repeat("d", 257) + `"`), "events[0].documentId"},
		{ev(`"documentId":"d"`), "events[0].timestamp"},
		{ev(`"timestamp":"yesterday","documentId":"d"`), "events[0].timestamp"},
		{ev(`"timestamp":"2026-11-22T09:34:00Z","documentId":"d","documentCreatedAt":` + `"` + strings.Repeat("9", telemetry.MaxCreatedAt+1) + `"`), "events[0].documentCreatedAt"},
		{ev(`"timestamp":"2026-11-22T09:34:00Z","documentId":42`), "events[0].documentId"},
		{`{"events":"all"}`, "events"},
		{`{"metadata":[1],"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"d"}]}`, "metadata"},
		{`not json`, "body"},
		{`{"metadata":{"k":"` + "\xff" + `"},"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"d"}]}`, "metadata.k"},
		{`{"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"d"}]} {}`, "body"},
	} {
		r := e.collect(c.body, "")
		b := r.errorBody(t, 400, "VALIDATION_ERROR")
		if len(b.Details) == 0 || b.Details[0].Field != c.field {
			t.Errorf("%.60s: details %+v, want field %s", c.body, b.Details, c.field)
		}
		if r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Error("an error answer lacks the CORS header")
		}
	}
	if !strings.Contains(e.Logs.String(), `"path":"/v1/collect","route":"/v1/collect","status":400`) {
		t.Error("refused collect requests are not logged")
	}
	r := e.collect(`{"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"d"}],"pad":"`+strings.Repeat("x", 64<<10)+`"}`, "")
	r.errorBody(t, 413, "PAYLOAD_TOO_LARGE")
	e.collect(deployedPayload("d"), strings.Repeat("k", 257)).errorBody(t, 400, "VALIDATION_ERROR")
	e.collect(deployedPayload("d"), "ql_\xff").errorBody(t, 400, "VALIDATION_ERROR")

	metrics := string(e.get("/metrics").body)
	if !strings.Contains(metrics, `quire_telemetry_payloads_total{result="invalid"} 15`) {
		t.Errorf("invalid payloads are not counted in the metrics:\n%s", grep(metrics, "quire_telemetry"))
	}
}

// TestCollectDecodesAsBefore keeps what encoding/json accepted: member
// names in any case, and the last of duplicate members.
func TestCollectDecodesAsBefore(t *testing.T) {
	t.Parallel()
	u := storetest.URL(t, "sqlite")
	e := newEnv(t, storetest.Open(t, u), unlimited())
	if r := e.collect(`{"EVENTS":[{"Timestamp":"2026-11-22T09:34:00Z","documentID":"first","documentId":"last"}]}`, ""); r.status != 204 {
		t.Fatalf("collect = %d %s", r.status, r.body)
	}
	if row := dumpEvents(t, u); !strings.Contains(row, "last") || strings.Contains(row, "first") {
		t.Errorf("stored %s, want one event of document last", row)
	}
}

func grep(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestCollectPreflight(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	r := e.do("OPTIONS", "/v1/collect", nil, map[string]string{"Origin": "https://editor.example",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-license-key"})
	h := r.header
	if r.status != 204 || h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "x-license-key") || h.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight = %d %v", r.status, h)
	}
}

// TestCollectBackPressure holds a lock from another connection so that the
// writer cannot commit (SQLite: the database's write lock; PostgreSQL: a
// lock on the events table): the bounded queue fills, the next request gets
// 503 with Retry-After, and once the lock is released every accepted
// request is committed.
func TestCollectBackPressure(t *testing.T) {
	t.Parallel()
	lockSQL := map[string][]string{
		"sqlite":   {"BEGIN IMMEDIATE"},
		"postgres": {"BEGIN", "LOCK TABLE telemetry_events IN EXCLUSIVE MODE"},
	}
	for _, b := range storetest.Backends {
		t.Run(b, func(t *testing.T) {
			u := storetest.URL(t, b)
			e := newEnv(t, storetest.Open(t, u), unlimited(), withSettings(func(c *config.Config) { c.CollectQueue = 2 }))
			ctx := context.Background()
			lock, err := storetest.SQL(t, u).Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range lockSQL[b] {
				if _, err := lock.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			over, answers, waiting := fillIntake(e, 2)
			over.errorBody(t, 503, "SERVICE_UNAVAILABLE")
			if over.header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
			lock.ExecContext(ctx, "ROLLBACK")
			lock.Close()
			// The others: accepted and committed, or refused as the first
			// when sent before the previous one was seen.
			accepted := 0
			for range waiting {
				switch r := <-answers; r.status {
				case 204:
					accepted++
				case 503:
				default:
					t.Errorf("an open waiting in the queue got %d", r.status)
				}
			}
			if accepted < 2 {
				t.Errorf("%d opens accepted, want at least the queue's 2", accepted)
			}
			if _, _, o := totals(license(e.report("", adminToken), quire.CommunityLicenseKey)); o != int64(accepted) {
				t.Errorf("%d opens counted, want the %d accepted", o, accepted)
			}
		})
	}
}

// fillIntake sends opens one at a time while the writer cannot commit,
// each once the previous one is seen in the queue (its length up by one)
// or in the writer's hands (the length at 0), until one is answered: the
// answer of a full queue. It returns that answer, and the answers of the
// others, which come once the writer can commit, and their number. An
// open seen at 0 may not have arrived yet: the next one may overtake it.
func fillIntake(e *env, queue int) (over response, answers <-chan response, waiting int) {
	e.t.Helper()
	sent := make(chan response, queue+8)
	queued := 0
	for i := range queue + 8 {
		go func() { sent <- e.collect(deployedPayload(fmt.Sprintf("HASH-BP%d", i)), "") }()
		answered := false
		waitFor(e.t, time.Minute, "the open queued, taken or answered", func() bool {
			select {
			case over = <-sent:
				answered = true
				return true
			default:
			}
			n := queueLength(e)
			seen := n > queued || n == 0
			queued = n
			return seen
		})
		if answered {
			return over, sent, i
		}
	}
	e.t.Fatalf("%d opens accepted while the writer could not commit, with a queue of %d", queue+8, queue)
	return
}

var queueGauge = regexp.MustCompile(`(?m)^quire_telemetry_queue_length (\d+)$`)

// queueLength reads quire_telemetry_queue_length in /metrics.
func queueLength(e *env) int {
	e.t.Helper()
	m := queueGauge.FindStringSubmatch(string(e.get("/metrics").body))
	if m == nil {
		e.t.Fatal("no quire_telemetry_queue_length in /metrics")
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestCollectConcurrentRequestsShareCommits(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited(), withSettings(func(c *config.Config) { c.CollectQueue = 200 }))
		var wg sync.WaitGroup
		failed := make(chan int, 200)
		for i := 0; i < 200; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := e.collect(deployedPayload(fmt.Sprintf("HASH-C%03d", i%50)), ""); r.status != 204 {
					failed <- r.status
				}
			}()
		}
		wg.Wait()
		close(failed)
		for st := range failed {
			t.Errorf("a request got %d", st)
		}
		if n, a, o := totals(license(e.report("", adminToken), quire.CommunityLicenseKey)); n != 50 || a != 50 || o != 200 {
			t.Errorf("new %d, active %d, opens %d; want 50, 50, 200", n, a, o)
		}
	})
}

func TestUsagePeriodsAndRetention(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited())
		e.Clock.Set(time.Date(2026, 10, 30, 12, 0, 0, 0, time.UTC))
		e.collect(deployedPayload("A"), "")
		e.Clock.Advance(24 * time.Hour) // Oct 31
		e.collect(deployedPayload("A"), "")
		e.collect(deployedPayload("B"), "")
		e.Clock.Advance(24 * time.Hour) // Nov 1
		e.collect(deployedPayload("A"), "")

		byDay := e.report("from=2026-10-30T00:00:00Z&to=2026-11-02T00:00:00Z&groupBy=day", adminToken)
		c := license(byDay, quire.CommunityLicenseKey)
		want := [][3]int64{{1, 1, 1}, {1, 2, 2}, {0, 1, 1}} // Oct 30, Oct 31, Nov 1
		if len(c.Periods) != 3 {
			t.Fatalf("periods %+v", c.Periods)
		}
		for i, p := range c.Periods {
			if got := [3]int64{p.NewDocuments, p.ActiveDocuments, p.Opens}; got != want[i] || !p.Start.Equal(time.Date(2026, 10, 30+i, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("day %d: %v at %v, want %v", i, got, p.Start, want[i])
			}
		}
		if wide := license(e.report("from=1970-01-01T00:00:00Z&to=2100-01-01T00:00:00Z&groupBy=day", adminToken), quire.CommunityLicenseKey); len(wide.Periods) != 3 {
			t.Errorf("a 130-year report by day lists %d periods, want the 3 active days", len(wide.Periods))
		}
		byMonth := e.report("from=2026-10-01T00:00:00Z&to=2026-12-01T00:00:00Z", adminToken)
		c = license(byMonth, quire.CommunityLicenseKey)
		if byMonth.GroupBy != "month" || len(c.Periods) != 2 ||
			[3]int64{c.Periods[0].NewDocuments, c.Periods[0].ActiveDocuments, c.Periods[0].Opens} != [3]int64{2, 2, 3} ||
			[3]int64{c.Periods[1].NewDocuments, c.Periods[1].ActiveDocuments, c.Periods[1].Opens} != [3]int64{0, 1, 1} {
			t.Errorf("by month: %+v", c.Periods)
		}

		e.Clock.Advance(91 * 24 * time.Hour)
		if err := e.Telemetry.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		again := license(e.report("from=2026-10-01T00:00:00Z&to=2026-12-01T00:00:00Z", adminToken), quire.CommunityLicenseKey)
		if fmt.Sprint(again.Periods) != fmt.Sprint(c.Periods) {
			t.Errorf("counts changed after the raw events were dropped: %+v, was %+v", again.Periods, c.Periods)
		}
	})
}

func TestUsageAccess(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited())
		acme, err := e.Telemetry.CreateLicense(context.Background(), "Acme Corp", "billing@acme.example", "")
		if err != nil {
			t.Fatal(err)
		}
		other, _ := e.Telemetry.CreateLicense(context.Background(), "Other Ltd", "ops@other.example", "")
		e.collect(deployedPayload("HASH-ACME"), acme.Key)
		e.collect(deployedPayload("HASH-COMM"), "")

		all := e.report("", adminToken)
		a := license(all, acme.Key)
		if len(all.Licenses) != 3 || a == nil || !a.Registered || a.Community || a.Organization == nil || *a.Organization != "Acme Corp" {
			t.Fatalf("admin report %+v", all)
		}
		if o := license(all, other.Key); o == nil || !o.Registered || len(o.Periods) != 0 {
			t.Errorf("a registered license without usage is listed, with no periods: %+v", o)
		}

		key, _, err := e.Auth.CreateKey(context.Background(), "billing@acme.example")
		if err != nil {
			t.Fatal(err)
		}
		mine := e.report("", key)
		if len(mine.Licenses) != 1 || mine.Licenses[0].LicenseKey != acme.Key {
			t.Errorf("the contact's key sees %+v, want only its license", mine.Licenses)
		}
		e.do("GET", "/v1/usage?licenseKey="+other.Key, nil, map[string]string{"Authorization": "Bearer " + key}).errorBody(t, 403, "FORBIDDEN")
		stranger, _, _ := e.Auth.CreateKey(context.Background(), "nobody@example.com")
		e.do("GET", "/v1/usage", nil, map[string]string{"Authorization": "Bearer " + stranger}).errorBody(t, 403, "FORBIDDEN")
		e.do("GET", "/v1/usage", nil, map[string]string{"Authorization": "Bearer " + acme.Key}).errorBody(t, 401, "AUTHENTICATION_ERROR")
		e.get("/v1/usage").errorBody(t, 401, "AUTHENTICATION_ERROR")

		for q, field := range map[string]string{"from=yesterday": "from", "groupBy=week": "groupBy",
			"from=2026-01-01T00:00:00Z&to=2025-01-01T00:00:00Z": "to", "to=garbage": "to"} {
			b := e.do("GET", "/v1/usage?"+q, nil, map[string]string{"Authorization": "Bearer " + adminToken}).errorBody(t, 400, "VALIDATION_ERROR")
			if b.Details[0].Field != field {
				t.Errorf("%s: details %+v", q, b.Details)
			}
		}

		r := e.do("GET", "/v1/usage?licenseKey="+other.Key, nil, map[string]string{"Authorization": "Bearer " + adminToken, "Accept": "text/csv"})
		if !strings.Contains(string(r.body), other.Key+",Other Ltd,true,false,,0,0,0") {
			t.Errorf("a license without activity has no CSV line:\n%s", r.body)
		}
		r = e.do("GET", "/v1/usage?licenseKey="+acme.Key, nil, map[string]string{"Authorization": "Bearer " + adminToken, "Accept": "text/csv"})
		rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
		if err != nil || r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") || len(rows) != 2 ||
			rows[1][0] != acme.Key || rows[1][1] != "Acme Corp" || rows[1][7] != "1" {
			t.Errorf("CSV = %d %v %v", r.status, rows, err)
		}
	})
}

// TestCollectSuperdoc2x replays what the 2.x library sends (UUID ids,
// integrator ids, null and absent ids, currentUrl as the origin) under a
// license with hosts, and under the community key (no hosts): every open
// is answered 204 and counted, the anonymous and other-host ones apart,
// in JSON and CSV alike.
func TestCollectSuperdoc2x(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited())
		acme, err := e.Telemetry.CreateLicense(context.Background(), "Acme Corp", "billing@acme.example", "docs.acme.example, portal.acme.example")
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{acme.Key, "-"} {
			for name, p := range telemetrytest.Superdoc2x() {
				if r := e.collect(string(p.Body), key); r.status != 204 {
					t.Fatalf("%s under %s: %d %s", name, key, r.status, r.body)
				}
			}
		}
		const query = "from=2026-01-01T00:00:00Z&to=2100-01-01T00:00:00Z"
		rep := e.report(query, adminToken)
		// Documents: the two session UUIDs, acme-contract-42 (twice), and the
		// UUID of portal.acme.example; the open from elsewhere.example is
		// the other host's, the two without an id anonymous.
		for key, want := range map[string]telemetry.PeriodUsage{
			acme.Key:                  {NewDocuments: 4, ActiveDocuments: 4, Opens: 8, AnonymousOpens: 2, OtherHostOpens: 1},
			quire.CommunityLicenseKey: {NewDocuments: 5, ActiveDocuments: 5, Opens: 8, AnonymousOpens: 2, OtherHostOpens: 0},
		} {
			l := license(rep, key)
			if l == nil || len(l.Periods) != 1 {
				t.Fatalf("%s: %+v", key, l)
			}
			got := l.Periods[0]
			got.Start = time.Time{}
			if got != want {
				t.Errorf("%s: %+v, want %+v", key, got, want)
			}
		}
		r := e.do("GET", "/v1/usage?"+query+"&licenseKey="+acme.Key, nil, map[string]string{"Authorization": "Bearer " + adminToken, "Accept": "text/csv"})
		lines, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
		if err != nil || len(lines) != 2 || strings.Join(lines[0][7:], ",") != "opens,anonymousOpens,otherHostOpens" ||
			strings.Join(lines[1][5:], ",") != "4,4,8,2,1" {
			t.Errorf("CSV (%v):\n%s", err, r.body)
		}
	})
}
