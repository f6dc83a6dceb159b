package quire

import "time"

// KeyLimits are one API key's overrides of the default per-key limits.
// A nil field keeps the default; a zero value means no limit.
type KeyLimits struct {
	KeyID      string
	Concurrent *int          // requests in progress at once (per instance)
	Rate       *int          // requests per RatePer (with RatePer)
	RatePer    time.Duration // the rate's window
	Quota      *int64        // documents per calendar month, UTC
	UpdatedAt  time.Time
}

// Metered operations of the API.
const (
	OpConvert  = "convert"
	OpSign     = "sign"
	OpAnnotate = "annotate"
	OpVerify   = "verify"
	OpPDF      = "pdf" // the PDF tools, POST /v1/pdf/{operation}
)

// Operations are the metered operations, in the order reports list them.
var Operations = []string{OpConvert, OpSign, OpAnnotate, OpVerify, OpPDF}

// OperationUsage is what one key's answered requests of one operation
// processed.
type OperationUsage struct {
	Requests      int64   `json:"requests"`
	Documents     int64   `json:"documents"`
	Pages         int64   `json:"pages"`
	InputBytes    int64   `json:"inputBytes"`
	EngineSeconds float64 `json:"engineSeconds"`
}

// Add adds o's counts to u.
func (u *OperationUsage) Add(o OperationUsage) {
	u.Requests += o.Requests
	u.Documents += o.Documents
	u.Pages += o.Pages
	u.InputBytes += o.InputBytes
	u.EngineSeconds += o.EngineSeconds
}

// APIUsageRow is the usage of one key's operation in one period: a day
// (Day) or a month (Month) number.
type APIUsageRow struct {
	KeyID     string
	Period    int64
	Operation string
	OperationUsage
}

// A Charge is what one answer to a key counts: its usage rows (Period: the
// day) and the key's monthly quota of documents (0: none), which the
// month's count may not pass. It is committed whole or not at all.
type Charge struct {
	KeyID string
	Quota int64
	Rows  []APIUsageRow
	// Hold, when not empty, names the request's hold on the quota
	// (RequestHold), ended in the transaction that counts the charge.
	Hold string
}

// Documents are the documents the charge counts against the quota.
func (c Charge) Documents() int64 {
	var n int64
	for _, r := range c.Rows {
		n += r.Documents
	}
	return n
}

// RequestHold asks to hold, for request ID of the instance whose lease is
// Lease while the request is in progress, one of the Concurrent requests
// of key KeyID at once (when Concurrent is above 0) and one document of
// its Quota in Month, Month's number (when Quota is above 0): both, or
// neither when either limit is reached.
type RequestHold struct {
	ID, KeyID, Lease string
	Concurrent       int64
	Month, Quota     int64
}

// RequestHeld is the outcome of a RequestHold: the key's requests in
// progress (when it asked for one of them), its documents this month and
// the holds on its quota of its requests in progress (when it asked for
// one of those), all under live leases and before it, and whether it was
// taken.
type RequestHeld struct {
	Running, Documents, Held int64
	Taken                    bool
}

// ChargeResult is the outcome of a Charge: the key's documents this month
// after it (before it, when it was refused), and whether the quota refused
// it; a refused charge counted nothing.
type ChargeResult struct {
	MonthDocuments int64
	Refused        bool
}
