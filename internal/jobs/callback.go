package jobs

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/quire-dev/quire"
)

// Callback is the delivery of a job's answer itself, as a foreign API's
// asynchronous requests ask for it (Gotenberg's webhooks): an answer of
// 2xx to Success, as the synchronous route gave it, with its headers
// named in Keep; any other, or a job that failed without one, to Failure,
// in the body FailureBody makes. Both are signed as the events of
// Standard Webhooks are.
type Callback struct {
	Success, Failure Target
	Keep             []string
	FailureBody      func(status int, message string) []byte
}

// Target is an address of a Callback, the method of its request, and the
// headers to add to it.
type Target struct {
	URL, Method string
	Header      http.Header
}

// callBack delivers j's answer as cb asks.
func (s *Service) callBack(ctx context.Context, j quire.Job, cb Callback) error {
	res, err := s.db.JobResult(ctx, j.ID)
	switch {
	case errors.Is(err, quire.ErrNotFound): // failed before any answer: cancelled, timed out, crashed too often
		res = quire.JobResult{Status: http.StatusInternalServerError, Body: []byte(j.Error)}
		res.Header = map[string][]string{"Content-Type": {"text/plain; charset=utf-8"}}
	case err != nil:
		return err
	}
	to, header, body := cb.Success, http.Header{}, res.Body
	if res.Status/100 == 2 {
		for _, h := range cb.Keep {
			if v := http.Header(res.Header).Values(h); len(v) > 0 {
				header[h] = v
			}
		}
	} else {
		to, body = cb.Failure, cb.FailureBody(res.Status, answerMessage(res))
		header.Set("Content-Type", "application/json")
	}
	for k, v := range to.Header {
		header[http.CanonicalHeaderKey(k)] = v
	}
	Sign(header, s.opt.WebhookSecret, "msg_"+j.ID, s.opt.Now(), body)
	status, err := s.fetcher.Send(ctx, to.Method, to.URL, header, body)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("the receiver answered %d", status)
	}
	return nil
}

// answerMessage is the message of an answer that is not a success: its
// text when it is plain text, else the message of its error body.
func answerMessage(res quire.JobResult) string {
	if t, _, _ := mime.ParseMediaType(http.Header(res.Header).Get("Content-Type")); t == "text/plain" {
		return strings.TrimSpace(string(res.Body))
	}
	return errorMessage(res)
}
