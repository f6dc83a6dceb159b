package reporter

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testGUID    = "1B2C3D4E-5F60-4A7B-8C9D-0E1F2A3B4C5D"
	testCreated = "2024-01-15T10:30:00Z"
	testID      = "HASH-8F81172B"
)

// testDOCX builds a DOCX carrying testGUID and testCreated.
func testDOCX(t testing.TB) []byte {
	t.Helper()
	parts := []struct{ name, body string }{
		{"word/document.xml", `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body/></w:document>`},
		{"word/settings.xml", `<w:settings xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:w15="http://schemas.microsoft.com/office/word/2012/wordml"><w15:docId w15:val="{` + testGUID + `}"/></w:settings>`},
		{"docProps/core.xml", `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dcterms="http://purl.org/dc/terms/"><dcterms:created>` + testCreated + `</dcterms:created></cp:coreProperties>`},
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, p := range parts {
		f, err := w.Create(p.name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(p.body))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// request is what the test endpoint received.
type request struct {
	method, path string
	header       http.Header
	body         []byte
}

// collector starts an endpoint on 127.0.0.1 that records every request.
func collector(t *testing.T, status int) (*httptest.Server, chan request) {
	t.Helper()
	got := make(chan request, 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- request{r.Method, r.URL.Path, r.Header.Clone(), body}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func closeReporter(t *testing.T, r *Reporter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestOpenSendsOneEvent(t *testing.T) {
	srv, got := collector(t, http.StatusNoContent)
	r := New(Config{
		LicenseKey:     "org-key",
		LibraryVersion: "1.2.3",
		Telemetry:      Telemetry{Endpoint: srv.URL + "/v1/collect", Metadata: map[string]any{"app": "tests", "n": 1}},
	})
	id, err := r.Open(testDOCX(t))
	if err != nil {
		t.Fatal(err)
	}
	if id.ID != testID {
		t.Errorf("Open returned %+v, want ID %s", id, testID)
	}
	closeReporter(t, r)

	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	req := <-got
	if req.method != http.MethodPost || req.path != "/v1/collect" {
		t.Errorf("%s %s, want POST /v1/collect", req.method, req.path)
	}
	for name, want := range map[string]string{"Content-Type": "application/json", "X-License-Key": "org-key", "Cookie": "", "Authorization": ""} {
		if v := req.header.Get(name); v != want {
			t.Errorf("header %s: %q, want %q", name, v, want)
		}
	}
	var p struct {
		LibraryVersion string         `json:"libraryVersion"`
		Metadata       map[string]any `json:"metadata"`
		BrowserInfo    *struct {
			UserAgent, CurrentURL, Hostname string
			ScreenSize                      struct{ Width, Height int }
		} `json:"browserInfo"`
		Events []map[string]string `json:"events"`
	}
	if err := json.Unmarshal(req.body, &p); err != nil {
		t.Fatalf("payload %s: %v", req.body, err)
	}
	if p.LibraryVersion != "1.2.3" || p.Metadata["app"] != "tests" || p.Metadata["n"] != 1.0 || p.BrowserInfo == nil || len(p.Events) != 1 {
		t.Fatalf("payload %s", req.body)
	}
	ev := p.Events[0]
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(ev["timestamp"]) ||
		ev["documentId"] != testID || ev["documentCreatedAt"] != testCreated || len(ev) != 3 {
		t.Errorf("event %v", ev)
	}
	if s := r.Stats(); s != (Stats{Sent: 1}) {
		t.Errorf("stats %+v", s)
	}
}

func TestOneRequestPerOpen(t *testing.T) {
	srv, got := collector(t, http.StatusNoContent)
	r := New(Config{Telemetry: Telemetry{Endpoint: srv.URL}})
	const opens = 5
	for range opens {
		if _, err := r.Open(testDOCX(t)); err != nil {
			t.Fatal(err)
		}
	}
	closeReporter(t, r)
	if len(got) != opens {
		t.Fatalf("%d requests for %d opens", len(got), opens)
	}
	for range opens {
		var p struct{ Events []any }
		if err := json.Unmarshal((<-got).body, &p); err != nil || len(p.Events) != 1 {
			t.Errorf("payload with %d events (%v)", len(p.Events), err)
		}
	}
}

func TestNotDOCXReportsNothing(t *testing.T) {
	srv, got := collector(t, http.StatusNoContent)
	r := New(Config{Telemetry: Telemetry{Endpoint: srv.URL}})
	if _, err := r.Open([]byte("not a zip")); err == nil {
		t.Error("no error for a non-DOCX input")
	}
	closeReporter(t, r)
	if len(got) != 0 || r.Stats() != (Stats{}) {
		t.Errorf("%d requests, stats %+v", len(got), r.Stats())
	}
}

// countingListener accepts connections on 127.0.0.1 and counts them,
// answering none.
func countingListener(t *testing.T) (string, *connCounter) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	n := &connCounter{addr: ln.Addr().String(), probed: make(chan struct{}, 1)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go n.close(c)
		}
	}()
	return "http://" + n.addr + "/v1/collect", n
}

// connCounter counts the connections to a countingListener, the test's
// own probe (settle) left out once seen.
type connCounter struct {
	atomic.Int64
	addr   string
	probed chan struct{}
}

const probeLine = "quire-test-probe\n"

func (n *connCounter) close(c net.Conn) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, _ := bufio.NewReader(c).ReadString('\n'); line == probeLine {
		n.Add(-1)
		n.probed <- struct{}{}
	}
}

// settle returns once the listener has counted a connection the test
// makes now. The kernel queues connections in the order they were made,
// so any connection made before it is counted by then: a count of none
// means none was made, not one still on its way.
func (n *connCounter) settle(t *testing.T) {
	t.Helper()
	c, err := net.Dial("tcp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, probeLine)
	select {
	case <-n.probed:
	case <-time.After(time.Minute):
		t.Fatal("the listener did not take the test's own connection within a minute")
	}
}

func TestDisabledMakesNoRequest(t *testing.T) {
	endpoint, accepted := countingListener(t)
	off := false
	before := runtime.NumGoroutine()
	r := New(Config{Telemetry: Telemetry{Enabled: &off, Endpoint: endpoint}})
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("New started %d goroutines with telemetry disabled", n-before)
	}
	for range 3 {
		id, err := r.Open(testDOCX(t))
		if err != nil || id.ID != testID {
			t.Fatalf("Open: %+v, %v", id, err)
		}
	}
	// An undocumented document still gets its generated values.
	id, err := r.Open(undocumentedDOCX(t))
	if err != nil || !id.Generated || id.GUID == "" || id.Created == "" {
		t.Errorf("Open: %+v, %v", id, err)
	}
	closeReporter(t, r)
	accepted.settle(t)
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections with telemetry disabled", n)
	}
	if r.Stats() != (Stats{}) {
		t.Errorf("stats %+v", r.Stats())
	}
}

// undocumentedDOCX builds a DOCX with no GUID and no creation time.
func undocumentedDOCX(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	if _, err := w.Create("word/document.xml"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return buf.Bytes()
}

func TestEnabledConnectsToListener(t *testing.T) {
	// The counterpart of TestDisabledMakesNoRequest: the listener does count.
	endpoint, accepted := countingListener(t)
	r := New(Config{Telemetry: Telemetry{Endpoint: endpoint}})
	if _, err := r.Open(testDOCX(t)); err != nil {
		t.Fatal(err)
	}
	closeReporter(t, r)
	if accepted.Load() == 0 || r.Stats().Failed != 1 {
		t.Errorf("%d connections, stats %+v", accepted.Load(), r.Stats())
	}
}

// hangingServer starts an endpoint on 127.0.0.1 that answers no request
// until the client gives up or the test ends: a reporter that waited for
// it would hang the test.
func hangingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		// Reading the body lets the server notice a client hanging up.
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first
	return srv, &requests
}

// TestOpenNeverBlocks opens far more documents than the buffer holds while
// the endpoint hangs, until the test ends: every Open returns (one that
// waited for the endpoint would hang the test) and the excess is dropped.
func TestOpenNeverBlocks(t *testing.T) {
	srv, requests := hangingServer(t)
	r := New(Config{Telemetry: Telemetry{Endpoint: srv.URL}})
	docx := testDOCX(t)
	const opens = 200
	for range opens {
		if _, err := r.Open(docx); err != nil {
			t.Fatal(err)
		}
	}
	if l := len(r.queue); l > QueueSize {
		t.Errorf("queue holds %d events, capacity %d", l, QueueSize)
	}
	// One event may be in flight, QueueSize more waiting; the rest are dropped.
	if d := r.Stats().Dropped; d < opens-QueueSize-1 || d > opens-QueueSize {
		t.Errorf("dropped %d, want %d or %d", d, opens-QueueSize-1, opens-QueueSize)
	}

	// Close returns when its context ends, the endpoint still hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := r.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: %v, want DeadlineExceeded", err)
	}
	s := r.Stats()
	if s.Sent != 0 || s.Sent+s.Failed+s.Dropped != opens || requests.Load() != 1 {
		t.Errorf("stats %+v, %d requests", s, requests.Load())
	}
	if _, err := r.Open(docx); err != nil || r.Stats().Dropped != s.Dropped+1 {
		t.Errorf("Open after Close: %v, stats %+v", err, r.Stats())
	}
}

// Each event sent to an address nothing listens at is counted as failed.
func TestOpenOnRefusedConnectionCountsFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String() + "/v1/collect"
	ln.Close() // nothing listens there any more
	r := New(Config{Telemetry: Telemetry{Endpoint: endpoint}})
	const opens = 10
	for range opens {
		if _, err := r.Open(testDOCX(t)); err != nil {
			t.Fatal(err)
		}
	}
	closeReporter(t, r)
	if s := r.Stats(); s != (Stats{Failed: opens}) {
		t.Errorf("stats %+v", s)
	}
}

func TestTimeout(t *testing.T) {
	srv, _ := hangingServer(t)
	r := New(Config{Telemetry: Telemetry{Endpoint: srv.URL}, Timeout: 50 * time.Millisecond})
	if _, err := r.Open(testDOCX(t)); err != nil {
		t.Fatal(err)
	}
	closeReporter(t, r)
	if s := r.Stats(); s != (Stats{Failed: 1}) {
		t.Errorf("stats %+v", s)
	}
}

func TestFailuresCounted(t *testing.T) {
	var redirected atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { redirected.Add(1) }))
	defer target.Close()
	for _, status := range []int{http.StatusBadRequest, http.StatusInternalServerError, http.StatusFound} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, status)
		}))
		r := New(Config{Telemetry: Telemetry{Endpoint: srv.URL}})
		if _, err := r.Open(testDOCX(t)); err != nil {
			t.Fatal(err)
		}
		closeReporter(t, r)
		srv.Close()
		if s := r.Stats(); s != (Stats{Failed: 1}) {
			t.Errorf("status %d: stats %+v", status, s)
		}
	}
	if redirected.Load() != 0 {
		t.Error("a redirect was followed")
	}
}

func TestLicenseKeyPrecedence(t *testing.T) {
	tests := []struct{ root, deprecated, want string }{
		{"", "", DefaultLicenseKey},
		{"root", "", "root"},
		{"", "deprecated", "deprecated"},
		{"root", "deprecated", "root"},
	}
	for _, tt := range tests {
		srv, got := collector(t, http.StatusNoContent)
		r := New(Config{LicenseKey: tt.root, Telemetry: Telemetry{Endpoint: srv.URL, LicenseKey: tt.deprecated}})
		if _, err := r.Open(testDOCX(t)); err != nil {
			t.Fatal(err)
		}
		closeReporter(t, r)
		if len(got) != 1 {
			t.Fatalf("%d requests", len(got))
		}
		if key := (<-got).header.Get("X-License-Key"); key != tt.want {
			t.Errorf("root %q, deprecated %q: sent %q, want %q", tt.root, tt.deprecated, key, tt.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	r := New(Config{})
	defer closeReporter(t, r)
	if r.endpoint != "http://localhost:8080/v1/collect" || r.licenseKey != DefaultLicenseKey || r.timeout != DefaultTimeout ||
		!r.enabled || r.client.Jar != nil {
		t.Errorf("defaults: %+v", r)
	}
}

func TestCloseTwice(t *testing.T) {
	srv, _ := collector(t, http.StatusNoContent)
	r := New(Config{Telemetry: Telemetry{Endpoint: srv.URL}})
	closeReporter(t, r)
	closeReporter(t, r)
}
