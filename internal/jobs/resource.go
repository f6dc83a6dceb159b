package jobs

import (
	"time"

	"github.com/quire-dev/quire"
)

// Resource is a job as GET /v1/jobs/{id} and webhooks show it.
type Resource struct {
	ID         string     `json:"id"`
	Operation  string     `json:"operation"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"createdAt"`
	StartedAt  *time.Time `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
	Error      *string    `json:"error"`
	Waiting    string     `json:"waiting,omitempty"` // why a queued job waits: the limit it ran into
	Webhook    *Webhook   `json:"webhook,omitempty"`
}

// Webhook is the delivery of a job's webhook so far.
type Webhook struct {
	URL         string     `json:"url"`
	Attempts    int        `json:"attempts"`
	DeliveredAt *time.Time `json:"deliveredAt"`
	LastError   string     `json:"lastError,omitempty"`
}

// View is the resource of j.
func View(j quire.Job) Resource {
	r := Resource{ID: j.ID, Operation: j.Operation, Status: j.Status, CreatedAt: j.CreatedAt,
		StartedAt: optional(j.StartedAt), FinishedAt: optional(j.FinishedAt), Waiting: j.Waiting}
	if j.Error != "" {
		r.Error = &j.Error
	}
	if j.Webhook.URL != "" {
		r.Webhook = &Webhook{URL: j.Webhook.URL, Attempts: j.Webhook.Attempts, DeliveredAt: optional(j.Webhook.DeliveredAt), LastError: j.Webhook.LastError}
	}
	return r
}

func optional(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
