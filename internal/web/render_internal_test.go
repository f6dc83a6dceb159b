package web

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quire-dev/quire"
)

// These tests run the pages' helpers alone, without a server: what a page
// answers for an error, how it shows an audit event's data and the
// examiner's terms, and the base of its links. The pages themselves are
// tested through the API server in the other files.

// TestExplain: a page answers an error of the contract with its status,
// its message and Retry-After in whole seconds (rounded up); any other
// error with 500 and a sentence naming the request id, its text only in
// the log.
func TestExplain(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	p := &Pages{deps: Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))}}
	rec := httptest.NewRecorder()
	status, msg := p.explain(rec, httptest.NewRequest("GET", "/admin", nil),
		&quire.Error{Code: quire.CodeRateLimit, Message: "Too many attempts.", RetryAfter: 1500 * time.Millisecond})
	if status != 429 || msg != "Too many attempts." || rec.Header().Get("Retry-After") != "2" {
		t.Errorf("rate limit: %d %q, Retry-After %q", status, msg, rec.Header().Get("Retry-After"))
	}

	rec = httptest.NewRecorder()
	rec.Header().Set("X-Request-Id", "rid-7")
	status, msg = p.explain(rec, httptest.NewRequest("POST", "/verify", nil), errors.New("open /var/lib/quire/x: disk full"))
	if status != 500 || !strings.Contains(msg, "rid-7") || strings.Contains(msg, "disk full") || rec.Header().Get("Retry-After") != "" {
		t.Errorf("unexpected error: %d %q", status, msg)
	}
	if !strings.Contains(logs.String(), "disk full") || !strings.Contains(logs.String(), "rid-7") {
		t.Errorf("the error is not logged with its request id: %s", logs.String())
	}
}

// TestBrief: an audit event's data is shown as JSON, not escaped for
// HTML (the template does that), cut after briefChars characters, never
// inside one; data that JSON cannot hold is said so.
func TestBrief(t *testing.T) {
	t.Parallel()
	if got := brief(map[string]any{"a": "<b>"}); got != `{"a":"<b>"}` {
		t.Errorf("short data: %q", got)
	}
	got := brief(map[string]any{"signature": "data:image/png;base64," + strings.Repeat("é", 300)})
	if r := []rune(got); len(r) != briefChars+1 || r[briefChars] != '…' || !utf8.ValidString(got) {
		t.Errorf("long data: %d characters, %q", len(r), got)
	}
	if got := brief(map[string]any{"n": math.NaN()}); !strings.HasPrefix(got, "(data not shown: ") {
		t.Errorf("data JSON cannot hold: %q", got)
	}
}

// TestWordsAndBaseURL: an examiner's term is put in words, an unknown one
// left as it is; links are based on QUIRE_PUBLIC_URL, else on the scheme
// and host the request came to.
func TestWordsAndBaseURL(t *testing.T) {
	t.Parallel()
	if words("TOTAL_PASSED") != "passed every check" || words("NEW_TERM") != "NEW_TERM" {
		t.Errorf("words: %q, %q", words("TOTAL_PASSED"), words("NEW_TERM"))
	}
	r := httptest.NewRequest("GET", "http://quire.local:8080/verify", nil)
	p := &Pages{} // not New: its assets are gzipped once per process, which takes seconds with -race
	if got := p.baseURL(r); got != "http://quire.local:8080" {
		t.Errorf("plain request: %q", got)
	}
	r.TLS = &tls.ConnectionState{}
	if got := p.baseURL(r); got != "https://quire.local:8080" {
		t.Errorf("TLS request: %q", got)
	}
	p.opt.PublicURL = "https://q.example"
	if got := p.baseURL(r); got != "https://q.example" {
		t.Errorf("public URL: %q", got)
	}
}
