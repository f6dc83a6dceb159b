package jobs

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/quire-dev/quire"
)

// Callback is the delivery of a job's answer itself, as a foreign API's
// asynchronous requests ask for it (Gotenberg's webhooks): an answer of
// 2xx to Success, as the synchronous route gave it, with its headers
// named in Keep; any other, or a job that failed without one, to Failure
// (when it has an address), in the body FailureBody makes. Once that is
// delivered, Events (when it has an address) is told how the job ended,
// in the body EventBody makes: once, its failure only logged, as the
// answer's delivery must not wait for a notice. All are signed as the
// events of Standard Webhooks are.
type Callback struct {
	Success, Failure, Events Target
	Keep                     []string
	FailureBody              func(status int, message string) []byte
	EventBody                func(Ending) []byte
}

// Ending is how a job ended, as a Callback's Events are told it: the
// job, the status of its answer, the message of an answer that is not a
// success, the answer's headers, and the time of the notice.
type Ending struct {
	Job     string
	Status  int
	Message string
	Header  http.Header
	At      time.Time
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
	end := Ending{Job: j.ID, Status: res.Status, Header: http.Header(res.Header), At: s.opt.Now()}
	to, header, body := cb.Success, http.Header{}, res.Body
	if res.Status/100 == 2 {
		for _, h := range cb.Keep {
			if v := end.Header.Values(h); len(v) > 0 {
				header[h] = v
			}
		}
	} else {
		end.Message = answerMessage(res)
		to, body = cb.Failure, cb.FailureBody(res.Status, end.Message)
		header.Set("Content-Type", "application/json")
	}
	if to.URL != "" {
		if err := s.send(ctx, to, header, "msg_"+j.ID, body); err != nil {
			return err
		}
	}
	if cb.Events.URL != "" {
		header := http.Header{"Content-Type": {"application/json"}}
		if err := s.send(ctx, cb.Events, header, "evt_"+j.ID, cb.EventBody(end)); err != nil {
			s.opt.Logger.Warn("webhook event not delivered", "job_id", j.ID, "err", err)
		}
	}
	return nil
}

// send makes the request of to with header (to's own added) and body,
// signed with id; an answer other than 2xx is an error.
func (s *Service) send(ctx context.Context, to Target, header http.Header, id string, body []byte) error {
	for k, v := range to.Header {
		header[http.CanonicalHeaderKey(k)] = v
	}
	Sign(header, s.opt.WebhookSecret, id, s.opt.Now(), body)
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
