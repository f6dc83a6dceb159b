package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/jobs"
)

func (s *Server) jobRoutes() []Route {
	if s.deps.Jobs == nil {
		return nil
	}
	return []Route{
		{Method: "GET", Path: "/v1/jobs/{id}", Handler: s.job, Auth: KeyRequired},
		{Method: "GET", Path: "/v1/jobs/{id}/result", Handler: s.jobResult, Auth: KeyRequired},
	}
}

// prefersAsync reports whether the request asks to be answered at once
// and run later (RFC 7240 Prefer: respond-async).
func prefersAsync(r *http.Request) bool {
	for _, v := range r.Header.Values("Prefer") {
		for p := range strings.SplitSeq(v, ",") {
			if name, _, _ := strings.Cut(strings.TrimSpace(p), "="); strings.EqualFold(strings.TrimSpace(name), "respond-async") {
				return true
			}
		}
	}
	return false
}

// asksAsync reports whether r, of route rt, asks to be run as a job, and
// the addresses its end is delivered to: Prefer: respond-async and
// Quire-Webhook-Url, or what rt's dialect reads instead. A job's own run
// of its request is never asked again.
func (s *Server) asksAsync(rt Route, r *http.Request) ([]Webhook, bool, error) {
	if !rt.Async || r.Context().Value(jobKeyCtx{}) != nil {
		return nil, false, nil
	}
	if rt.Dialect != nil && rt.Dialect.Async != nil {
		webhooks, async, err := rt.Dialect.Async(r)
		if async && s.deps.Jobs == nil { // what the dialect asks cannot be ignored, as a preference is
			return nil, false, quire.Errorf(quire.CodeEngineBusy, "Requests run later are disabled on this server.")
		}
		return webhooks, async, err
	}
	if s.deps.Jobs == nil || !prefersAsync(r) {
		return nil, false, nil
	}
	if url := r.Header.Get("Quire-Webhook-Url"); url != "" {
		return []Webhook{{Header: "Quire-Webhook-Url", URL: url}}, true, nil
	}
	return nil, true, nil
}

// notReplayed are the request headers a job does not keep: credentials
// (the job runs as its key), the asynchrony itself, and what belongs to
// the connection.
var notReplayed = []string{"Authorization", "Cookie", "Prefer", "Quire-Webhook-Url", "Connection", "Content-Length",
	"Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Expect"}

// submit stores the request of route rt as a job of the caller's key:
// 202 with the job, once it is stored. What the request would be refused
// for before any work, it is refused for now, with the same answer: a
// key's spent monthly quota, and the route's Check. The limits that free
// with time (rate, requests at once, a full engine) are not checked: the
// job waits for them.
func (s *Server) submit(w http.ResponseWriter, r *http.Request, rt Route, webhooks []Webhook) {
	key, ok := APIKey(r.Context())
	if !ok { // an anonymous caller of a foreign API (QUIRE_GOTENBERG_ANONYMOUS)
		s.fail(w, r, quire.Errorf(quire.CodeAuthentication, "An API key is required to run a request later: a job belongs to its key."))
		return
	}
	webhook := ""
	for i, h := range webhooks {
		if err := s.deps.Jobs.CheckWebhook(r.Context(), h.Header, h.URL); err != nil {
			s.fail(w, r, err)
			return
		}
		if i == 0 {
			webhook = h.URL
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, r, bodyError(r, err))
		return
	}
	if err := s.checkSubmission(r, rt, key.ID, body); err != nil {
		s.fail(w, r, err)
		return
	}
	header := r.Header.Clone()
	for _, h := range notReplayed {
		header.Del(h)
	}
	j, err := s.deps.Jobs.Submit(r.Context(), key.ID, rt.Metered, webhook,
		quire.JobRequest{Method: r.Method, Target: r.URL.RequestURI(), Header: header, Body: body})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if rt.Dialect != nil && rt.Dialect.Accepted != nil {
		rt.Dialect.Accepted(w, r, j)
		return
	}
	w.Header().Set("Location", "/v1/jobs/"+j.ID)
	w.Header().Set("Preference-Applied", "respond-async")
	writeJSON(w, http.StatusAccepted, jobs.View(j))
}

// checkSubmission runs submit's checks of r, whose body was read.
func (s *Server) checkSubmission(r *http.Request, rt Route, keyID string, body []byte) error {
	if s.deps.Limits != nil && rt.Metered != "" {
		if err := s.deps.Limits.CheckQuota(r.Context(), keyID); err != nil {
			return err
		}
	}
	if rt.Check == nil {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return rt.Check(r)
}

func (s *Server) job(w http.ResponseWriter, r *http.Request) {
	key, _ := APIKey(r.Context())
	j, err := s.deps.Jobs.Get(r.Context(), key.ID, jobID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, jobs.View(j))
}

// jobID is the {id} of the job routes (dispatch finds the route with
// mux.Handler, which leaves PathValue empty).
func jobID(r *http.Request) string {
	return strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/jobs/"), "/result")
}

// jobResult answers what the synchronous call answered: its status, the
// headers that carry meaning, its body.
func (s *Server) jobResult(w http.ResponseWriter, r *http.Request) {
	key, _ := APIKey(r.Context())
	res, err := s.deps.Jobs.Result(r.Context(), key.ID, jobID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(res.Body)))
	w.WriteHeader(res.Status)
	w.Write(res.Body)
}

// notKept are the answer's headers a job's result does not keep: they
// describe the moment of the run, not the answer. X-Request-Id is kept:
// it names the run, as the requestId of an error body does.
var notKept = []string{"Date", "Content-Length", "RateLimit", "RateLimit-Policy", "Retry-After"}

// RunJob answers job j's request as the synchronous route does: through
// the same routing, limits and metering, as the job's key (if it is still
// valid), in its tenant. An answer that says "not now" (429, 503) is not
// the job's result: the job waits and runs again.
func (s *Server) RunJob(ctx context.Context, j quire.Job, req quire.JobRequest) (quire.JobResult, error) {
	ctx = context.WithValue(ctx, jobKeyCtx{}, j.KeyID)
	r, err := http.NewRequestWithContext(ctx, req.Method, req.Target, bytes.NewReader(req.Body))
	if err != nil {
		return quire.JobResult{}, err
	}
	r.Header = http.Header(req.Header)
	r.RemoteAddr = "job:" + j.ID
	rec := &responseRecorder{header: http.Header{}}
	s.jobHandler.ServeHTTP(rec, r)
	if rec.status == 0 {
		return quire.JobResult{}, errors.New("the handler wrote no answer")
	}
	after, _ := strconv.Atoi(rec.header.Get("Retry-After"))
	for _, h := range notKept {
		rec.header.Del(h)
	}
	res := quire.JobResult{Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}
	if rec.status == http.StatusTooManyRequests || rec.status == http.StatusServiceUnavailable {
		return quire.JobResult{}, &jobs.Later{After: max(time.Duration(after)*time.Second, time.Second), Result: res}
	}
	return res, nil
}

// responseRecorder keeps the response of a job's run.
type responseRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (rc *responseRecorder) Header() http.Header { return rc.header }

func (rc *responseRecorder) WriteHeader(status int) {
	if rc.status == 0 {
		rc.status = status
	}
}

func (rc *responseRecorder) Write(b []byte) (int, error) {
	rc.WriteHeader(http.StatusOK)
	return rc.body.Write(b)
}
