package telemetry

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/quire-dev/quire"
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
