package jobs

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// received is a request a callback receiver got.
type received struct {
	path   string
	header http.Header
	body   string
}

// TestCallbackDeliversTheAnswerThenItsEnd: a job whose request asks for a
// Callback has its answer delivered as the synchronous route gave it (a
// success with the headers Keep names, a failure in FailureBody's words),
// then its Events address told how it ended; without a Failure address,
// a failure is told to Events only; an events address that does not
// answer 2xx costs the delivery nothing: it is not tried again.
func TestCallbackDeliversTheAnswerThenItsEnd(t *testing.T) {
	got := make(chan received, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{path: r.URL.Path, header: r.Header, body: string(b)}
		if r.URL.Path == "/broken-events" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer hook.Close()
	callback := func(h http.Header) (Callback, bool) {
		if h.Get("Callback") == "" {
			return Callback{}, false
		}
		extra := http.Header{"X-Tenant": {"acme"}}
		return Callback{
			Success:     Target{URL: hook.URL + "/done", Method: http.MethodPut, Header: extra},
			Failure:     Target{URL: h.Get("Failure-Url"), Method: http.MethodPost, Header: extra},
			Events:      Target{URL: hook.URL + h.Get("Events-Path"), Method: http.MethodPost, Header: extra},
			Keep:        []string{"Content-Type"},
			FailureBody: func(status int, message string) []byte { return fmt.Appendf(nil, "failed %d: %s", status, message) },
			EventBody: func(e Ending) []byte {
				return fmt.Appendf(nil, "%s ended %d (%s) trace %s", e.Job, e.Status, e.Message, e.Header.Get("Trace"))
			},
		}, true
	}
	s := newService(t, storetest.URL(t, storetest.Backends[0]), func(o *Options) {
		o.Workers, o.Callback = 1, callback
		o.Webhooks = fetch.New(fetch.Options{AllowPrivate: true, Timeout: 10 * time.Second})
	})
	start(t, s, func(_ context.Context, _ quire.Job, req quire.JobRequest) (quire.JobResult, error) {
		if strings.Contains(string(req.Body), "bad") {
			return quire.JobResult{Status: 400, Header: map[string][]string{"Content-Type": {"text/plain"}, "Trace": {"t-2"}}, Body: []byte("bad input\n")}, nil
		}
		return quire.JobResult{Status: 200, Header: map[string][]string{"Content-Type": {"application/pdf"}, "Trace": {"t-1"}}, Body: []byte("%PDF-")}, nil
	})
	submit := func(body, failureURL, eventsPath string) quire.Job {
		t.Helper()
		h := map[string][]string{"Callback": {"yes"}, "Events-Path": {eventsPath}}
		if failureURL != "" {
			h["Failure-Url"] = []string{failureURL}
		}
		j, err := s.Submit(context.Background(), "A", quire.OpConvert, hook.URL+"/done", quire.JobRequest{Method: "POST", Target: "/forms/x", Header: h, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	next := func(path string) received {
		t.Helper()
		select {
		case r := <-got:
			if r.path != path || r.header.Get("X-Tenant") != "acme" || r.header.Get("webhook-signature") == "" {
				t.Fatalf("delivery to %s %v %q, want a signed one to %s with X-Tenant", r.path, r.header, r.body, path)
			}
			return r
		case <-time.After(time.Minute):
			t.Fatalf("no delivery to %s within a minute", path)
			return received{}
		}
	}

	j := submit("good", "", "/events")
	if r := next("/done"); r.body != "%PDF-" || r.header.Get("Content-Type") != "application/pdf" || r.header.Get("Trace") != "" {
		t.Errorf("the answer delivered: %q %v, want the PDF with its Content-Type only", r.body, r.header)
	}
	if r := next("/events"); r.body != j.ID+" ended 200 () trace t-1" || !strings.HasPrefix(r.header.Get("webhook-id"), "evt_") {
		t.Errorf("the event: %q (id %q), want the job's end with an evt_ id", r.body, r.header.Get("webhook-id"))
	}

	j = submit("bad", hook.URL+"/failed", "/events")
	if r := next("/failed"); r.body != "failed 400: bad input" || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("the failure delivered: %q %v", r.body, r.header)
	}
	if r := next("/events"); r.body != j.ID+" ended 400 (bad input) trace t-2" {
		t.Errorf("the event: %q", r.body)
	}

	j = submit("bad", "", "/events") // no failure address: the event alone
	if r := next("/events"); r.body != j.ID+" ended 400 (bad input) trace t-2" {
		t.Errorf("the event: %q", r.body)
	}

	j = submit("good", "", "/broken-events")
	next("/done")
	next("/broken-events")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) { // the poll's interval, not a synchronisation
		if j, _ = s.Get(context.Background(), "A", j.ID); !j.Webhook.DeliveredAt.IsZero() || j.Webhook.LastError != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the delivery was not recorded within a minute")
		}
	}
	if j.Webhook.DeliveredAt.IsZero() || j.Webhook.Attempts != 1 || j.Webhook.LastError != "" {
		t.Errorf("delivery with the events address answering 500: %+v, want delivered at the first attempt", j.Webhook)
	}
}
