package telemetry

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
)

var now = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

func TestParseKeepsWhatBillingNeeds(t *testing.T) {
	body := `{"libraryVersion":"2.1.0","superdocVersion":"1.0.0","browserInfo":{"hostname":"docs.example.com\u0000"},
		"metadata":{"plan":"pro","n":1},"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"HASH-1","documentCreatedAt":"2024-01-15T10:30:00Z"},
		{"timestamp":"2026-11-22T09:35:00+01:00","documentId":"HASH-2"}]}`
	evs, err := Parse([]byte(body), " ql_acme ", now, 1024)
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
	evs, err := Parse([]byte(`{"superdocVersion":"1.46.3","browserInfo":{},"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"HASH-0000ABCD","documentCreatedAt":null}]}`), "", now, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if e := evs[0]; e.LicenseKey != quire.CommunityLicenseKey || e.LibraryVersion != "1.46.3" || e.Metadata != "{}" || e.DocumentCreatedAt != nil {
		t.Errorf("event %+v", e)
	}
}

func TestParseRefusesControlCharacters(t *testing.T) {
	_, err := Parse([]byte(`{"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"HASH\u0000X"}]}`), "", now, 1024)
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Details[0].Field != "events[0].documentId" {
		t.Errorf("NUL in documentId: %v", err)
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
	evs, _ := Parse([]byte(`{"libraryVersion":"`+long+`","events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"d"}]}`), "", now, 1024)
	if len(evs[0].LibraryVersion) != maxLibraryVersion {
		t.Errorf("library version kept at %d characters", len(evs[0].LibraryVersion))
	}
}

func TestParseRefusesInvalidUTF8(t *testing.T) {
	ok := `"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"d"}]`
	for name, c := range map[string]struct{ body, key, field string }{
		"metadata":    {`{"metadata":{"k":"` + "\xff" + `"},` + ok + `}`, "", "metadata.k"},
		"license key": {`{` + ok + `}`, "ql_\xff", LicenseHeader},
	} {
		_, err := Parse([]byte(c.body), c.key, now, 1024)
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.Details[0].Field != c.field {
			t.Errorf("%s: %v, want a detail on %s", name, err, c.field)
		}
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

// TestParseDecodesAsBefore keeps what encoding/json accepted: member names
// in any case, and the last of duplicate members.
func TestParseDecodesAsBefore(t *testing.T) {
	evs, err := Parse([]byte(`{"EVENTS":[{"Timestamp":"2026-11-22T09:34:00Z","documentID":"first","documentId":"last"}]}`), "", now, 1024)
	if err != nil || len(evs) != 1 || evs[0].DocumentID != "last" {
		t.Errorf("= %+v, %v; want one event of document last", evs, err)
	}
}
