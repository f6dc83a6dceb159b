// Package reporter is the editor side of the usage-telemetry protocol: it
// identifies each DOCX document opened (see package docid) and reports the
// open to the telemetry endpoint, fire and forget.
//
// Each Open sends one POST of the telemetry payload holding one event, with
// the headers Content-Type: application/json and X-License-Key. Open never
// waits for the network: events go to a small bounded buffer drained by one
// background goroutine. When the buffer is full, events are dropped. There
// are no retries, no cookies and no credentials; failures are only counted
// (see Stats). With telemetry disabled no goroutine is started and no request
// is ever made, while documents are still identified so that exports carry
// their GUID and creation time.
//
// The payload's browserInfo object is sent with empty values: a Go program
// is not a browser, and the field is kept only for receivers that expect it.
package reporter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire-dev/quire/docid"
)

const (
	// DefaultLicenseKey is the community and evaluation key, used when none is configured.
	DefaultLicenseKey = "community-and-eval-agplv3"
	// DefaultBaseURL is where telemetry goes unless Telemetry.Endpoint says
	// otherwise: a quire server on this machine at its default address.
	DefaultBaseURL = "http://localhost:8080"
	// DefaultTimeout bounds each telemetry request.
	DefaultTimeout = 10 * time.Second
	// QueueSize is how many events may wait for sending; more are dropped.
	QueueSize = 64
)

// Config configures a Reporter, mirroring the editor library's options.
type Config struct {
	// LicenseKey links opens to an account; DefaultLicenseKey when empty.
	LicenseKey string
	Telemetry  Telemetry
	// LibraryVersion is reported as libraryVersion.
	LibraryVersion string
	// HTTPClient sends the requests; when nil, a client that follows no
	// redirects is used. Its cookie jar, if any, is the caller's choice.
	HTTPClient *http.Client
	// Timeout bounds each request; DefaultTimeout when zero.
	Timeout time.Duration
}

// Telemetry holds the telemetry options.
type Telemetry struct {
	// Enabled turns reporting on or off; nil means on.
	Enabled *bool
	// Endpoint receives the events; DefaultBaseURL + "/v1/collect" when empty.
	Endpoint string
	// Metadata is sent with every request. It is copied by New (shallowly).
	Metadata map[string]any
	// Deprecated: set Config.LicenseKey instead, which wins when both are set.
	LicenseKey string
}

// Stats counts what happened to the events of a Reporter.
type Stats struct {
	Sent    uint64 // answered with a 2xx status
	Failed  uint64 // network error, timeout or non-2xx answer
	Dropped uint64 // never sent: buffer full, or the reporter closed
}

// Reporter reports document opens. Its methods are safe for concurrent use.
type Reporter struct {
	enabled    bool
	endpoint   string
	licenseKey string
	version    string
	metadata   map[string]any
	client     *http.Client
	timeout    time.Duration

	mu     sync.RWMutex // guards closed against sends on the closed queue
	closed bool
	queue  chan event
	done   chan struct{} // closed when the sender goroutine returns
	ctx    context.Context
	cancel context.CancelFunc

	sent, failed, dropped atomic.Uint64
}

// New returns a Reporter; when telemetry is enabled it starts the one
// goroutine that sends events, which Close stops.
func New(cfg Config) *Reporter {
	r := &Reporter{
		enabled:    cfg.Telemetry.Enabled == nil || *cfg.Telemetry.Enabled,
		endpoint:   cfg.Telemetry.Endpoint,
		licenseKey: licenseKey(cfg),
		version:    cfg.LibraryVersion,
		metadata:   maps.Clone(cfg.Telemetry.Metadata),
		client:     cfg.HTTPClient,
		timeout:    cfg.Timeout,
	}
	if r.endpoint == "" {
		r.endpoint = DefaultBaseURL + "/v1/collect"
	}
	if r.metadata == nil {
		r.metadata = map[string]any{}
	}
	if r.client == nil {
		r.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	if r.enabled {
		r.queue = make(chan event, QueueSize)
		r.done = make(chan struct{})
		r.ctx, r.cancel = context.WithCancel(context.Background())
		go r.run()
	}
	return r
}

// licenseKey applies the precedence of the root key over the deprecated one.
func licenseKey(cfg Config) string {
	switch {
	case cfg.LicenseKey != "":
		return cfg.LicenseKey
	case cfg.Telemetry.LicenseKey != "":
		return cfg.Telemetry.LicenseKey
	}
	return DefaultLicenseKey
}

// Open identifies a DOCX document and, when telemetry is enabled, queues its
// open event without waiting. The error is the one of docid.Identify: the
// input is not a DOCX package or exceeds its limits. Nothing is reported then.
func (r *Reporter) Open(docx []byte) (docid.Identity, error) {
	id, err := docid.Identify(docx)
	if err != nil {
		return id, err
	}
	if r.enabled {
		r.enqueue(event{
			Timestamp:         time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
			DocumentID:        id.ID,
			DocumentCreatedAt: id.Created,
		})
	}
	return id, nil
}

func (r *Reporter) enqueue(ev event) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		r.dropped.Add(1)
		return
	}
	select {
	case r.queue <- ev:
	default:
		r.dropped.Add(1)
	}
}

// Stats returns the counts so far.
func (r *Reporter) Stats() Stats {
	return Stats{Sent: r.sent.Load(), Failed: r.failed.Load(), Dropped: r.dropped.Load()}
}

// Close stops accepting events and waits until the queued ones are sent.
// When ctx ends first, the request in flight is abandoned, the rest are
// dropped and ctx's error is returned. Later Opens still identify documents
// but report nothing.
func (r *Reporter) Close(ctx context.Context) error {
	if !r.enabled {
		return nil
	}
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.queue)
	}
	r.mu.Unlock()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		r.cancel()
		<-r.done
		return ctx.Err()
	}
}

// run sends the queued events one at a time until the queue is closed.
func (r *Reporter) run() {
	defer close(r.done)
	defer r.cancel()
	for ev := range r.queue {
		if r.ctx.Err() != nil {
			r.dropped.Add(1)
			continue
		}
		if err := r.send(ev); err != nil {
			r.failed.Add(1)
			continue
		}
		r.sent.Add(1)
	}
}

// send POSTs one event. The answer is only checked for a 2xx status.
func (r *Reporter) send(ev event) error {
	body, err := json.Marshal(payload{
		LibraryVersion: r.version,
		Metadata:       r.metadata,
		Events:         []event{ev},
	})
	if err != nil {
		return fmt.Errorf("reporter: encoding the payload: %w", err)
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("reporter: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-License-Key", r.licenseKey)
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// Read a little of the body so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errors.New("reporter: endpoint answered " + resp.Status)
	}
	return nil
}

// payload is the telemetry payload (spec 2.8).
type payload struct {
	LibraryVersion string         `json:"libraryVersion"`
	BrowserInfo    browserInfo    `json:"browserInfo"`
	Metadata       map[string]any `json:"metadata"`
	Events         []event        `json:"events"`
}

type browserInfo struct {
	UserAgent  string     `json:"userAgent"`
	CurrentURL string     `json:"currentUrl"`
	Hostname   string     `json:"hostname"`
	ScreenSize screenSize `json:"screenSize"`
}

type screenSize struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

type event struct {
	Timestamp         string `json:"timestamp"`
	DocumentID        string `json:"documentId"`
	DocumentCreatedAt string `json:"documentCreatedAt"`
}
