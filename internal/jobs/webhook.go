package jobs

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/secretfile"
)

// webhookAttempts is more attempts than QUIRE_WEBHOOK_RETRY_FOR allows at
// any setting: the retry period, not a count, ends the deliveries.
const webhookAttempts = 10_000

// webhookArgs is River's job of delivering a job's end.
type webhookArgs struct {
	JobID string `json:"job_id"`
}

func (webhookArgs) Kind() string { return "quire_webhook" }

type webhookWorker struct {
	river.WorkerDefaults[webhookArgs]
	s *Service
}

// NextRetry backs off exponentially from one second up to an hour, with
// a random half of the wait as jitter, so that the retries of many jobs
// to one receiver that was down do not arrive at once.
func (w *webhookWorker) NextRetry(rj *river.Job[webhookArgs]) time.Time {
	return time.Now().Add(backoff(rj.Attempt))
}

func backoff(attempt int) time.Duration {
	d := min(time.Second<<min(max(attempt-1, 0), 12), time.Hour)
	return d/2 + mrand.N(d/2+1)
}

func (w *webhookWorker) Work(ctx context.Context, rj *river.Job[webhookArgs]) error {
	s := w.s
	j, err := s.db.Job(ctx, rj.Args.JobID)
	if errors.Is(err, quire.ErrNotFound) {
		return river.JobCancel(err) // expired meanwhile
	}
	if err != nil {
		return err
	}
	err = s.deliver(ctx, j)
	outcome := "delivered"
	if err != nil {
		outcome = "failed"
	}
	s.metrics.webhooks.WithLabelValues(outcome).Inc()
	failure := ""
	if err != nil {
		failure = err.Error()
	}
	if rerr := s.db.RecordWebhookAttempt(ctx, j.ID, err == nil, failure, s.opt.Now()); rerr != nil {
		s.opt.Logger.Error("webhook attempt not recorded", "job_id", j.ID, "err", rerr)
	}
	if err != nil && s.opt.Now().Sub(rj.CreatedAt) >= s.opt.WebhookRetryFor {
		s.opt.Logger.Warn("webhook given up", "job_id", j.ID, "attempts", rj.Attempt, "err", err)
		return river.JobCancel(err)
	}
	return err
}

// deliver posts the event of j's end, signed as Standard Webhooks do, or
// its answer, when its request asked for a Callback.
func (s *Service) deliver(ctx context.Context, j quire.Job) error {
	if s.opt.Callback != nil {
		header, err := s.db.JobRequestHeader(ctx, j.ID)
		if err != nil {
			return err
		}
		if cb, ok := s.opt.Callback(header); ok {
			return s.callBack(ctx, j, cb)
		}
	}
	body, err := json.Marshal(Event{Type: "job." + j.Status, Data: View(j)})
	if err != nil {
		return err
	}
	to := Target{URL: j.Webhook.URL, Method: http.MethodPost}
	return s.send(ctx, to, http.Header{"Content-Type": {"application/json"}}, "msg_"+j.ID, body)
}

// Event is the body of a webhook.
type Event struct {
	Type string   `json:"type"` // job.succeeded, job.failed
	Data Resource `json:"data"`
}

// Sign sets the Standard Webhooks headers of a delivery of body: its id
// (the same on every attempt, for receivers to deduplicate), the time of
// the attempt, and v1, the HMAC-SHA256 of "id.timestamp.body" with secret.
func Sign(h http.Header, secret []byte, id string, at time.Time, body []byte) {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}

const secretPrefix = "whsec_"

// LoadSecret returns the webhook signing key: value (QUIRE_WEBHOOK_SECRET,
// "whsec_" and base64) when set, else the one in dataDir's webhook-secret,
// made there on first use (owner only).
func LoadSecret(value, dataDir string) ([]byte, error) {
	if value != "" {
		return parseSecret(value, "QUIRE_WEBHOOK_SECRET")
	}
	encode := func(key []byte) string { return secretPrefix + base64.StdEncoding.EncodeToString(key) }
	return secretfile.Load(dataDir, "webhook-secret", encode, parseSecret)
}

func parseSecret(text, where string) ([]byte, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(text), secretPrefix)
	key, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(key) < 24 {
		return nil, fmt.Errorf("%s: want %s followed by the base64 of at least 24 random bytes", where, secretPrefix)
	}
	return key, nil
}
