package httpapi

import (
	"context"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/annotate"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/pdftools"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/telemetry"
)

// What the API needs of each service, as the handlers use it: the
// composition root (internal/app) passes the real services; a test may
// pass only what its routes reach.

// Keys issues API keys by e-mailed code and authenticates them (internal/auth).
type Keys interface {
	Register(ctx context.Context, email, clientIP string) error
	Verify(ctx context.Context, email, code, clientIP string) (key string, err error)
	Authenticate(ctx context.Context, key string) (quire.APIKey, error)
	Recheck(ctx context.Context, id string) (quire.APIKey, error)
}

// Telemetry takes document-open events and reports usage (internal/telemetry).
type Telemetry interface {
	Collect(ctx context.Context, req *telemetry.Request) error
	Refused()
	KeysOf(ctx context.Context, email string) ([]string, error)
	Report(ctx context.Context, q telemetry.UsageQuery) (telemetry.Report, error)
}

// Signer signs and verifies PDFs and publishes its certificates (internal/signing).
type Signer interface {
	MaxDocumentBytes() int64
	MaxRequestBytes() int64
	Key() pdfsign.KeyInfo
	TSAStates() []pdfsign.TSAState
	CRL(caID string) ([]byte, error)
	CACertificate(caID string) ([]byte, error)
	Check(ctx context.Context, req signing.Request) error
	Sign(ctx context.Context, req signing.Request, keyID string) (signing.Result, error)
	Verify(ctx context.Context, d signing.Document) (signing.VerifyResult, error)
}

// Filler fills DOCX templates (internal/annotate).
type Filler interface {
	MaxDocumentBytes() int64
	Check(ctx context.Context, req annotate.Request) error
	Annotate(ctx context.Context, req annotate.Request) (annotate.Result, error)
}

// Engine is what the API watches of a pool of engine processes: its
// state for /v1/health and /metrics, and the wait it suggests when full.
type Engine interface {
	Status() engine.Status
	RetryAfter() time.Duration
}

// Conversion converts documents, choosing their engine
// (*conversion.Service): the handlers only decode its request and encode
// its result.
type Conversion interface {
	Check(req conversion.Request) error
	Convert(ctx context.Context, req conversion.Request) (conversion.Result, error)
}

// Printer is what the API shows of the Chromium pool (*chromium.Pool):
// its state and its browser's version.
type Printer interface {
	Engine
	Version() string
}

// PDFTools runs the operations of POST /v1/pdf/* (internal/pdftools).
type PDFTools interface {
	MaxBytes() int64
	MaxFiles() int
	Check(ctx context.Context, req pdftools.Request) error
	Do(ctx context.Context, req pdftools.Request) (pdftools.Result, error)
}

// Jobs keeps the requests answered later (Prefer: respond-async) and
// their answers (internal/jobs).
type Jobs interface {
	CheckWebhook(ctx context.Context, header, rawURL string) error
	Submit(ctx context.Context, keyID, op, webhook string, req quire.JobRequest) (quire.Job, error)
	Get(ctx context.Context, keyID, id string) (quire.Job, error)
	Result(ctx context.Context, keyID, id string) (quire.JobResult, error)
}

// Limits admits a key's request under its limits (internal/keylimit).
type Limits interface {
	Admit(ctx context.Context, key string) (*keylimit.Admission, error)
	CheckQuota(ctx context.Context, key string) error
}

// Meter counts a key's answered operations (internal/metering), within
// its monthly quota.
type Meter interface {
	Now() time.Time
	Record(ctx context.Context, c quire.Charge) (quire.ChargeResult, error)
	Counted(c quire.Charge, res quire.ChargeResult)
}

// Pinger reports whether the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}
