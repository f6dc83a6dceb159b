package gotenberg

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/jobs"
)

// Gotenberg's webhook headers: a request that sends them is answered 204
// at once and run as a job of quire's queue; its PDF (or ZIP) is then
// sent to the webhook's address, its error to the error address, as a
// JSON {"status", "message"}, and the events address (9.x's, which may
// replace the error address) is then told how the job ended.
const (
	hookURL          = "Gotenberg-Webhook-Url"
	hookErrorURL     = "Gotenberg-Webhook-Error-Url"
	hookMethod       = "Gotenberg-Webhook-Method"
	hookErrorMethod  = "Gotenberg-Webhook-Error-Method"
	hookExtraHeaders = "Gotenberg-Webhook-Extra-Http-Headers"
	hookEventsURL    = "Gotenberg-Webhook-Events-Url"
)

var hookHeaders = []string{hookURL, hookErrorURL, hookMethod, hookErrorMethod, hookExtraHeaders, hookEventsURL}

// hookMethods are the methods a webhook may use.
var hookMethods = []string{http.MethodPost, http.MethodPut, http.MethodPatch}

// asksWebhook reports whether r sends any of the webhook headers.
func asksWebhook(r *http.Request) bool {
	return slices.ContainsFunc(hookHeaders, func(h string) bool { return r.Header.Get(h) != "" })
}

// async is the Dialect's Async of the routes that make a file: a request
// with the webhook headers runs as a job, delivered to its addresses.
func async(r *http.Request) ([]httpapi.Webhook, bool, error) {
	if !asksWebhook(r) {
		return nil, false, nil
	}
	if _, err := callbackOf(r.Header); err != nil {
		return nil, false, err
	}
	var hooks []httpapi.Webhook
	for _, h := range []string{hookURL, hookErrorURL, hookEventsURL} {
		if url := r.Header.Get(h); url != "" {
			hooks = append(hooks, httpapi.Webhook{Header: h, URL: url})
		}
	}
	return hooks, true, nil
}

// accepted answers a request taken as a job: 204, as Gotenberg does.
func accepted(w http.ResponseWriter, r *http.Request, _ quire.Job) {
	w.Header().Set("Gotenberg-Trace", httpapi.RequestID(r.Context()))
	w.WriteHeader(http.StatusNoContent)
}

// Callback is jobs.Options.Callback for Gotenberg's routes: the delivery
// that the webhook headers kept in a job's request ask for.
func Callback(header http.Header) (jobs.Callback, bool) {
	if header.Get(hookURL) == "" {
		return jobs.Callback{}, false
	}
	cb, err := callbackOf(header)
	return cb, err == nil
}

// callbackOf reads the webhook headers; an error names the one that is
// missing or wrong.
func callbackOf(h http.Header) (jobs.Callback, error) {
	bad := func(header, issue string) error {
		return quire.Errorf(quire.CodeValidation, "Invalid request header: header '%s' %s", header, issue)
	}
	switch {
	case h.Get(hookURL) == "":
		return jobs.Callback{}, bad(hookURL, "is required with the other webhook headers")
	case h.Get(hookErrorURL) == "" && h.Get(hookEventsURL) == "":
		return jobs.Callback{}, bad(hookErrorURL, "is required with "+hookURL+", unless "+hookEventsURL+" is sent")
	}
	var extra map[string]string
	if v := h.Get(hookExtraHeaders); v != "" {
		if err := json.Unmarshal([]byte(v), &extra); err != nil {
			return jobs.Callback{}, bad(hookExtraHeaders, "must be a JSON object of strings, such as {\"Authorization\":\"Bearer ...\"}")
		}
	}
	header := http.Header{}
	for k, v := range extra {
		header.Set(k, v)
	}
	cb := jobs.Callback{
		Success:     jobs.Target{URL: h.Get(hookURL), Method: cmp.Or(strings.ToUpper(h.Get(hookMethod)), http.MethodPost), Header: header},
		Failure:     jobs.Target{URL: h.Get(hookErrorURL), Method: cmp.Or(strings.ToUpper(h.Get(hookErrorMethod)), http.MethodPost), Header: header},
		Events:      jobs.Target{URL: h.Get(hookEventsURL), Method: http.MethodPost, Header: header},
		Keep:        []string{"Content-Type", "Content-Disposition", "Gotenberg-Trace"},
		FailureBody: failureBody,
		EventBody:   eventBody,
	}
	for name, method := range map[string]string{hookMethod: cb.Success.Method, hookErrorMethod: cb.Failure.Method} {
		if !slices.Contains(hookMethods, method) {
			return jobs.Callback{}, bad(name, "must be POST, PUT or PATCH")
		}
	}
	return cb, nil
}

// event is the body of a Gotenberg webhook event: its correlation id is
// the Gotenberg-Trace of the job's run, as the file's delivery carries it
// (the caller's own when its request sent one), or the job's id for a job
// that ended without an answer.
type event struct {
	Event         string      `json:"event"` // webhook.success, webhook.error
	CorrelationID string      `json:"correlationId"`
	Timestamp     string      `json:"timestamp"`
	Error         *eventError `json:"error,omitempty"`
}

type eventError struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// eventBody is the body of the event telling how a job ended.
func eventBody(end jobs.Ending) []byte {
	e := event{Event: "webhook.success", CorrelationID: cmp.Or(end.Header.Get("Gotenberg-Trace"), end.Job), Timestamp: end.At.UTC().Format(time.RFC3339Nano)}
	if end.Status/100 != 2 {
		e.Event, e.Error = "webhook.error", &eventError{Status: end.Status, Message: end.Message}
	}
	b, _ := json.Marshal(e)
	return b
}

// failureBody is the body of Gotenberg's error callback.
func failureBody(status int, message string) []byte {
	b, _ := json.Marshal(map[string]any{"status": status, "message": message})
	return b
}
