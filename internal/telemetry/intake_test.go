package telemetry

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/telemetry/telemetrytest"
)

var now = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// parse decodes body as the HTTP adapter does, validates it, and returns
// its events as Collect stores them.
func parse(body, licenseKey string, metaLimit int) ([]quire.OpenEvent, error) {
	req := Request{LicenseKey: licenseKey}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return req.events(now, metaLimit, nil), nil
}

func TestParseKeepsWhatBillingNeeds(t *testing.T) {
	body := `{"libraryVersion":"2.1.0","superdocVersion":"1.0.0","browserInfo":{"hostname":"docs.example.com\u0000"},
		"metadata":{"plan":"pro","n":1},"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"HASH-1","documentCreatedAt":"2024-01-15T10:30:00Z"},
		{"timestamp":"2026-11-22T09:35:00+01:00","documentId":"HASH-2"}]}`
	evs, err := parse(body, " ql_acme ", 1024)
	if err != nil {
		t.Fatal(err)
	}
	e := evs[0]
	if len(evs) != 2 || e.LicenseKey != "ql_acme" || e.DocumentID != "HASH-1" || e.LibraryVersion != "2.1.0" ||
		e.Hostname != "docs.example.com" || e.Metadata != `{"plan":"pro","n":1}` || !e.ReceivedAt.Equal(now) ||
		e.OccurredAt != "2026-11-22T09:34:00.123Z" || e.DocumentCreatedAt == nil || *e.DocumentCreatedAt != "2024-01-15T10:30:00Z" {
		t.Fatalf("events = %+v", evs)
	}
	if evs[1].DocumentCreatedAt != nil || evs[1].Metadata != e.Metadata {
		t.Errorf("second event %+v", evs[1])
	}
}

func TestParseDeployedLibrary(t *testing.T) {
	evs, err := parse(`{"superdocVersion":"1.46.3","browserInfo":{},"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"HASH-0000ABCD","documentCreatedAt":null}]}`, "", 1024)
	if err != nil {
		t.Fatal(err)
	}
	if e := evs[0]; e.LicenseKey != quire.CommunityLicenseKey || e.LibraryVersion != "1.46.3" || e.Metadata != "{}" || e.DocumentCreatedAt != nil {
		t.Errorf("event %+v", e)
	}
}

func TestParseRefusesControlCharacters(t *testing.T) {
	_, err := parse(`{"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"HASH\u0000X"}]}`, "", 1024)
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Details[0].Field != "events[0].documentId" {
		t.Errorf("NUL in documentId: %v", err)
	}
}

// TestParseKeepsDocumentCreatedAtAsSent: it is the raw dcterms:created
// text of the document, which may be long, padded or not a date at all;
// refusing it would lose the open.
func TestParseKeepsDocumentCreatedAtAsSent(t *testing.T) {
	for _, created := range []string{
		"2024-01-15T10:30:00.1234567890123456789012345678901234567890123456789012345678901234Z", // 86 characters
		`\n    2024-01-15T10:30:00Z\n  `, "15 janvier 2024", strings.Repeat("x", MaxCreatedAt),
	} {
		evs, err := parse(`{"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"d","documentCreatedAt":"`+created+`"}]}`, "", 1024)
		want := strings.ReplaceAll(created, "\\n", "\n")
		if err != nil || *evs[0].DocumentCreatedAt != want {
			t.Errorf("documentCreatedAt %q: %+v, %v; want it kept as sent", created, evs, err)
		}
	}
	for _, created := range []string{strings.Repeat("x", MaxCreatedAt+1), `2024\u0000`} {
		_, err := parse(`{"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"d","documentCreatedAt":"`+created+`"}]}`, "", 1024)
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.Details[0].Field != "events[0].documentCreatedAt" {
			t.Errorf("documentCreatedAt of %d bytes: %v, want a detail on it", len(created), err)
		}
	}
}

func TestTruncateKeepsCharactersWhole(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"abcdef", 3, "abc"}, {"ab", 3, "ab"}, {"aé", 2, "a"}, {"日本語", 4, "日"}, {"日本語", 6, "日本"}} {
		if got := truncate(c.in, c.n); got != c.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	long := strings.Repeat("v", 100)
	evs, _ := parse(`{"libraryVersion":"`+long+`","events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"d"}]}`, "", 1024)
	if len(evs[0].LibraryVersion) != maxLibraryVersion {
		t.Errorf("library version kept at %d characters", len(evs[0].LibraryVersion))
	}
}

func TestParseQueryLimitsLicenseKeys(t *testing.T) {
	keys := make([]string, maxQueryKeys+1)
	if _, err := ParseQuery("", "", "", keys, now); quire.ErrorCode(err) != quire.CodeValidation {
		t.Errorf("%d license keys: %v", len(keys), err)
	}
	if q, err := ParseQuery("", "", "", keys[:maxQueryKeys], now); err != nil || len(q.Keys) != maxQueryKeys {
		t.Errorf("%d license keys: %v", maxQueryKeys, err)
	}
}

// TestParseSuperdoc2x: what the 2.x library sends is valid, an open
// without an id (null or absent) included, and the page's host is read
// from hostname, else from currentUrl (its origin).
func TestParseSuperdoc2x(t *testing.T) {
	want := map[string]struct{ id, host string }{
		"session-uuid-1":  {"3f0c9a7e-1b2d-4c5e-8f90-a1b2c3d4e5f6", "docs.acme.example"},
		"session-uuid-2":  {"b7e4d2c1-9a8f-4e6d-b5c4-3a2f1e0d9c8b", "docs.acme.example"},
		"integrator-id-1": {"acme-contract-42", "docs.acme.example"},
		"integrator-id-2": {"acme-contract-42", "docs.acme.example"},
		"null-id":         {"", "docs.acme.example"},
		"absent-id":       {"", "docs.acme.example"},
		"origin-only":     {"0d1e2f3a-4b5c-4d6e-8f7a-9b0c1d2e3f4a", "portal.acme.example"},
		"other-host":      {"c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f", "elsewhere.example"},
	}
	payloads := telemetrytest.Superdoc2x()
	if len(payloads) != len(want) {
		t.Fatalf("%d fixtures, want %d", len(payloads), len(want))
	}
	for name, w := range want {
		evs, err := parse(string(payloads[name].Body), "ql_acme", 1024)
		if err != nil || len(evs) != 1 {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if e := evs[0]; e.DocumentID != w.id || e.Hostname != w.host || e.LibraryVersion != "2.11.0" || e.DocumentCreatedAt != nil || e.OtherHost {
			t.Errorf("%s: %+v, want id %q from %s", name, e, w.id, w.host)
		}
	}
	if evs, err := parse(`{"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":""}]}`, "", 1024); err != nil || evs[0].DocumentID != "" {
		t.Errorf("an empty documentId: %v, want an anonymous open", err)
	}
}

// TestOpensFromOtherHosts: under a license with hosts, an open from
// another host, or from no host at all, is marked; a license without a
// list takes any host.
func TestOpensFromOtherHosts(t *testing.T) {
	hosts := map[string][]string{"ql_acme": {"docs.acme.example", "portal.acme.example"}}
	for _, c := range []struct {
		key, browserInfo string
		other            bool
	}{
		{"ql_acme", `{"hostname":"docs.acme.example","currentUrl":"https://docs.acme.example"}`, false},
		{"ql_acme", `{"hostname":"DOCS.Acme.Example."}`, false},
		{"ql_acme", `{"currentUrl":"https://portal.acme.example:8443"}`, false},
		{"ql_acme", `{"hostname":"evil.example","currentUrl":"https://evil.example"}`, true},
		{"ql_acme", `{"currentUrl":"https://docs.acme.example.evil.example"}`, true},
		{"ql_acme", `{}`, true},
		{"ql_acme", `{"currentUrl":"::not a url"}`, true},
		{"ql_other", `{"hostname":"evil.example"}`, false},
		{"", `{}`, false},
	} {
		req := Request{LicenseKey: c.key}
		if err := json.Unmarshal([]byte(`{"browserInfo":`+c.browserInfo+`,"events":[{"timestamp":"2026-11-22T09:34:00Z"}]}`), &req); err != nil {
			t.Fatal(err)
		}
		if e := req.events(now, 1024, hosts)[0]; e.OtherHost != c.other {
			t.Errorf("key %q, browserInfo %s: other host %v, want %v", c.key, c.browserInfo, e.OtherHost, c.other)
		}
	}
}

func TestParseHosts(t *testing.T) {
	got, err := ParseHosts(" www.Acme.example, acme.example\nacme.example,, [::1] 127.0.0.1 ")
	if want := []string{"127.0.0.1", "::1", "acme.example", "www.acme.example"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseHosts = %q, %v; want %q", got, err, want)
	}
	if got, err := ParseHosts("  "); err != nil || got != nil {
		t.Errorf("an empty list: %q, %v", got, err)
	}
	var many strings.Builder
	for i := range maxHosts + 1 {
		fmt.Fprintf(&many, "h%d.example,", i)
	}
	for _, bad := range []string{"https://acme.example", "acme.example/path", "ac!me", "*.acme.example", strings.Repeat("a", 254), many.String()} {
		if _, err := ParseHosts(bad); quire.ErrorCode(err) != quire.CodeValidation {
			t.Errorf("ParseHosts(%.40q): %v, want a validation error", bad, err)
		}
	}
}
