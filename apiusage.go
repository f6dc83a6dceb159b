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
