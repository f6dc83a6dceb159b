package gotenberg_test

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/jobs"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// delivery is a request a webhook receiver got.
type delivery struct {
	method, path string
	header       http.Header
	body         []byte
}

// receiver is a webhook receiver on loopback: each request it gets is sent
// on its channel.
func receiver(t *testing.T) (string, chan delivery) {
	got := make(chan delivery, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivery{method: r.Method, path: r.URL.Path, header: r.Header, body: body}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, got
}

// next is the receiver's next delivery, within a deadline that only a
// lost delivery reaches.
func next(t *testing.T, got chan delivery) delivery {
	t.Helper()
	select {
	case d := <-got:
		return d
	case <-time.After(time.Minute):
		t.Fatal("no webhook delivery within a minute")
		return delivery{}
	}
}

func webhooksDeliverTheFileOrTheError(t *testing.T, e *env) {
	url, got := receiver(t)
	hooks := e.bearer()
	hooks["Gotenberg-Webhook-Url"] = url + "/done"
	hooks["Gotenberg-Webhook-Error-Url"] = url + "/failed"
	hooks["Gotenberg-Webhook-Method"] = "PUT"
	hooks["Gotenberg-Webhook-Extra-Http-Headers"] = `{"X-Tenant":"acme"}`
	pdfs := []part{file("a.pdf", pdftest.OnePage("alpha")), file("b.pdf", pdftest.OnePage("beta"))}

	a := e.post(t, "/forms/pdf/merge", hooks, pdfs...)
	if a.status != http.StatusNoContent || a.header.Get("Gotenberg-Trace") == "" || len(a.body) != 0 {
		t.Fatalf("a merge with webhook headers: %d %q (trace %q), want 204 at once", a.status, a.body, a.header.Get("Gotenberg-Trace"))
	}
	d := next(t, got)
	if d.method != "PUT" || d.path != "/done" || d.header.Get("Content-Type") != "application/pdf" || d.header.Get("X-Tenant") != "acme" {
		t.Fatalf("delivery %s %s %v, want PUT /done of a PDF with X-Tenant", d.method, d.path, d.header)
	}
	if text := text(t, d.body); !strings.Contains(text, "alpha") || !strings.Contains(text, "beta") {
		t.Errorf("the delivered PDF reads %q, want the merge of alpha and beta", text)
	}
	verifySignature(t, d)

	if a := e.post(t, "/forms/pdf/merge", hooks, file("a.pdf", []byte("not a PDF")), pdfs[1]); a.status != http.StatusNoContent {
		t.Fatalf("a merge of a file that is no PDF, with webhook headers: %d %q, want 204", a.status, a.body)
	}
	d = next(t, got)
	var failure struct {
		Status  int
		Message string
	}
	if err := json.Unmarshal(d.body, &failure); err != nil || d.method != "POST" || d.path != "/failed" || d.header.Get("X-Tenant") != "acme" ||
		failure.Status != http.StatusBadRequest || !strings.Contains(failure.Message, "a.pdf") {
		t.Fatalf("error delivery %s %s %q, want POST /failed of {status: 400, message naming a.pdf}", d.method, d.path, d.body)
	}
	verifySignature(t, d)

	for header, want := range map[string]string{
		"Gotenberg-Webhook-Error-Url":                     "header 'Gotenberg-Webhook-Error-Url' is required",
		"Gotenberg-Webhook-Method=DELETE":                 "header 'Gotenberg-Webhook-Method' must be POST, PUT or PATCH",
		"Gotenberg-Webhook-Extra-Http-Headers=[":          "header 'Gotenberg-Webhook-Extra-Http-Headers' must be a JSON object",
		"Gotenberg-Webhook-Events-Url=ftp://example.com/": "Gotenberg-Webhook-Events-Url",
	} {
		bad := maps.Clone(hooks)
		if name, value, set := strings.Cut(header, "="); set {
			bad[name] = value
		} else {
			delete(bad, name)
		}
		e.post(t, "/forms/pdf/merge", bad, pdfs...).plainError(t, 400, want)
	}
	e.post(t, "/forms/pdf/info", hooks, pdfs[0]).plainError(t, 400, "the webhook headers are not supported by this route")
	select {
	case d := <-got:
		t.Errorf("a refused request was delivered: %s %s", d.method, d.path)
	default:
	}
}

// webhookEventsTellHowTheJobEnded: with Gotenberg 9's events address, a
// job's end is told there after its file or error is delivered, and the
// events address may stand for the error address.
func webhookEventsTellHowTheJobEnded(t *testing.T, e *env) {
	url, got := receiver(t)
	hooks := e.bearer()
	hooks["Gotenberg-Webhook-Url"] = url + "/done"
	hooks["Gotenberg-Webhook-Events-Url"] = url + "/events"
	hooks["Gotenberg-Webhook-Extra-Http-Headers"] = `{"X-Tenant":"acme"}`
	hooks["Gotenberg-Trace"] = "trace-of-the-caller"
	pdfs := []part{file("a.pdf", pdftest.OnePage("alpha")), file("b.pdf", pdftest.OnePage("beta"))}

	if a := e.post(t, "/forms/pdf/merge", hooks, pdfs...); a.status != http.StatusNoContent {
		t.Fatalf("a merge with an events address and no error address: %d %q, want 204", a.status, a.body)
	}
	if d := next(t, got); d.path != "/done" || d.header.Get("Gotenberg-Trace") != "trace-of-the-caller" {
		t.Fatalf("first delivery %s %s (trace %q), want the PDF at /done with the caller's trace", d.method, d.path, d.header.Get("Gotenberg-Trace"))
	}
	ev := nextEvent(t, got)
	if ev.Event != "webhook.success" || ev.CorrelationID != "trace-of-the-caller" || ev.Error != nil {
		t.Errorf("event %+v, want webhook.success correlated with the caller's trace", ev)
	}

	if a := e.post(t, "/forms/pdf/merge", hooks, file("a.pdf", []byte("not a PDF")), pdfs[1]); a.status != http.StatusNoContent {
		t.Fatalf("a merge of a file that is no PDF: %d %q, want 204", a.status, a.body)
	}
	ev = nextEvent(t, got) // no error address: the error is told as an event only
	if ev.Event != "webhook.error" || ev.Error == nil || ev.Error.Status != http.StatusBadRequest || !strings.Contains(ev.Error.Message, "a.pdf") {
		t.Errorf("event %+v, want webhook.error {status: 400, message naming a.pdf}", ev)
	}
}

// webhookEvent is the body of a Gotenberg webhook event.
type webhookEvent struct {
	Event         string
	CorrelationID string
	Timestamp     time.Time
	Error         *struct {
		Status  int
		Message string
	}
}

// nextEvent is the receiver's next delivery, which must be a signed
// event at /events carrying the extra headers and a recent timestamp.
func nextEvent(t *testing.T, got chan delivery) webhookEvent {
	t.Helper()
	d := next(t, got)
	var ev webhookEvent
	if err := json.Unmarshal(d.body, &ev); err != nil || d.method != "POST" || d.path != "/events" ||
		d.header.Get("Content-Type") != "application/json" || d.header.Get("X-Tenant") != "acme" {
		t.Fatalf("delivery %s %s %v %q (%v), want a JSON event POSTed to /events with X-Tenant", d.method, d.path, d.header, d.body, err)
	}
	if time.Since(ev.Timestamp).Abs() > time.Hour {
		t.Errorf("event timestamp %v, want the time of the job's end", ev.Timestamp)
	}
	verifySignature(t, d)
	return ev
}

// verifySignature checks d is signed as quire's webhooks are.
func verifySignature(t *testing.T, d delivery) {
	t.Helper()
	sec, err := strconv.ParseInt(d.header.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		t.Fatalf("webhook-timestamp %q", d.header.Get("webhook-timestamp"))
	}
	want := http.Header{}
	jobs.Sign(want, apitest.WebhookSecret, d.header.Get("webhook-id"), time.Unix(sec, 0), d.body)
	if got := d.header.Get("webhook-signature"); got != want.Get("webhook-signature") {
		t.Errorf("webhook-signature %q, want %q", got, want.Get("webhook-signature"))
	}
}
