// Package mail sends quire's e-mails (today: the one-time login codes).
//
// Two transports sit behind one Sender interface: SMTP, when the operator sets
// QUIRE_SMTP_URL, and the dev outbox, which writes each message as an .eml
// file so that a developer can run quire without any mail server. Both get
// their bytes from the same message builder, so what a developer sees in the
// outbox is what a relay would receive.
package mail

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Message is a plain-text e-mail.
type Message struct {
	To, Subject, Text string
}

// Sender delivers messages. Implementations are safe for concurrent use.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Options configures New. Field comments name the environment variables that
// the operator uses, so error messages can point at the right one.
type Options struct {
	// URL is QUIRE_SMTP_URL. Empty selects the dev outbox. See New for the forms.
	URL string
	// From is QUIRE_MAIL_FROM, e.g. "quire <no-reply@localhost>".
	// Empty means DefaultFrom.
	From string
	// CAFile is QUIRE_SMTP_CA_FILE: a PEM file of extra CA certificates to trust,
	// in addition to the system roots, for private relays and tests.
	CAFile string
	// Timeout bounds one message, dial and exchange together.
	// Zero or negative means DefaultTimeout.
	Timeout time.Duration
	// OutboxDir is where the dev outbox writes; the caller passes
	// $QUIRE_DATA_DIR/outbox. Only used when URL is empty.
	OutboxDir string
	// Logger receives one line per outbox message and one at start-up;
	// nil means slog.Default().
	Logger *slog.Logger
}

const (
	// DefaultFrom is the sender address used when Options.From is empty.
	DefaultFrom = "quire <no-reply@localhost>"
	// DefaultTimeout bounds one message when Options.Timeout is not set: long
	// enough for a slow relay, short enough that a login request gives up
	// instead of hanging.
	DefaultTimeout = 30 * time.Second
)

// New returns the SMTP sender when o.URL is set and the dev outbox otherwise.
// It checks the whole configuration up front (URL, sender address, CA file,
// outbox directory) so that a mistake stops quire at start-up rather than at
// the first login.
//
// URL forms:
//
//	smtp://[user[:password]@]host[:port][?starttls=mandatory|opportunistic|none]
//	smtps://[user[:password]@]host[:port]
//
// smtp:// upgrades with STARTTLS (default port 587). By default STARTTLS is
// mandatory: a relay that does not offer it is an error. "opportunistic" uses
// it when offered and goes on in clear otherwise; "none" never uses TLS, so the
// message and, on a loopback relay, the password travel in clear: it is meant
// only for a relay on the same host. smtps:// speaks TLS from the first byte
// (default port 465). User and password are percent-decoded; without a user no
// authentication is attempted.
func New(o Options) (Sender, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	from := o.From
	if from == "" {
		from = DefaultFrom
	}
	b, err := newBuilder(from)
	if err != nil {
		return nil, err
	}
	if o.URL == "" {
		return newOutbox(o.OutboxDir, b, logger)
	}
	return newSMTP(o, b, logger)
}

// sendError prefixes err with the destination, so that an operator reading a
// log line knows which relay or directory failed.
func sendError(where string, err error) error {
	return fmt.Errorf("mail: send to %s: %w", where, err)
}
