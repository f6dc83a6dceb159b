package quire

import "time"

// Job states (DESIGN.md "Jobs and webhooks").
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
)

// Job is a request accepted with Prefer: respond-async: run later, by any
// instance, its answer kept until it expires.
type Job struct {
	ID         string
	KeyID      string
	Operation  string // quire.OpConvert, OpSign, OpAnnotate
	Status     string
	CreatedAt  time.Time
	StartedAt  time.Time // zero until it runs
	FinishedAt time.Time // zero until it ends
	Error      string    // why it failed
	Waiting    string    // why a queued job that ran into a limit waits (the limit's message); empty otherwise
	Runs       int       // times the work started (more than one after a crash)
	Webhook    JobWebhook
}

// JobWebhook is the delivery of a job's end to the address its request named.
type JobWebhook struct {
	URL         string // empty: none asked
	Attempts    int
	DeliveredAt time.Time // zero until a receiver answered 2xx
	LastError   string
}

// JobRequest is what a job runs: the request as the synchronous route
// would have received it (the key is not kept, only the job's KeyID).
type JobRequest struct {
	Method string
	Target string              // path and query
	Header map[string][]string // the headers that carry meaning
	Body   []byte
}

// JobResult is the answer of a finished job, as the synchronous route gave it.
type JobResult struct {
	Status int
	Header map[string][]string
	Body   []byte
}
