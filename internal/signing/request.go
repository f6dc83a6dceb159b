// Package signing turns a sign request into a signed PDF: it validates the
// request, obtains the document (inline or by URL), converts DOCX to PDF,
// appends the certificate pages and applies the signature.
package signing

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/pdfsign"
)

// Limits of a sign request that are not configuration: they bound what an
// auditor can read on a certificate page. Lengths are in characters.
const (
	MinNameLength      = 2
	MaxNameLength      = 255 // the hosted API's limit
	MaxEmailLength     = 254
	MaxIPLength        = 64
	MaxUserAgentLength = 512
	MaxEventIDLength   = 128
	MaxEventTypeLength = 64
	MaxMetadataBytes   = 16 << 10
	MaxEventDataBytes  = 2 << 20 // a drawn signature PNG fits
)

// Request is a sign request (spec 2.1), however it arrived; Validate
// tells what is wrong with it.
type Request struct {
	Document    Document
	Signer      Signer
	AuditTrail  []AuditEvent
	EventID     string         // empty: Sign generates a UUID
	Metadata    map[string]any // nil when absent
	Certificate bool           // append the certificate pages
	PDFA        string         // a DOCX becomes this PDF/A version (engine.PDFAVersions) before signing; "" for none
	// Level is the PAdES level asked (B-B, B-T, B-LT or B-LTA); "" for
	// the configured one. Strict refuses (422) to deliver less than it.
	Level  string
	Strict bool

	// Malformed lists the fields that the request's adapter could not
	// decode; Validate reports them with the rest.
	Malformed []quire.Detail
}

// Document is the input: exactly one of Bytes and URL.
type Document = quire.Document

// Signer identifies who signs (spec 2.3).
type Signer struct {
	Email, Name, IP, UserAgent string
}

// AuditEvent is one interaction of the signer (spec 2.4); the signing
// record keeps the request's events as they are.
type AuditEvent = quire.AuditEvent

var eventType = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Validate reports every bad field of r at once, as a VALIDATION_ERROR
// whose details name the fields as the JSON request does.
func (r Request) Validate() error {
	p := problems(r.Document.Problems())
	p.signer(r.Signer)
	p.auditTrail(r.AuditTrail)
	p.text("eventId", r.EventID, 0, MaxEventIDLength)
	p.json("metadata", r.Metadata, MaxMetadataBytes)
	if _, err := pdfsign.ParseLevel(r.Level); r.Level != "" && err != nil {
		p.add("level", "must be B-B, B-T, B-LT or B-LTA")
	}
	var invalid *quire.Error // the conversion's own rule for pdfa
	if errors.As(engine.JobOptions{PDFA: r.PDFA}.Validate(engine.FromDOCX, engine.ToPDF), &invalid) {
		p = append(p, invalid.Details...)
	}
	return quire.InvalidRequest("The sign request is not valid.", r.Malformed, p)
}

// problems collects the details of everything wrong with a request.
type problems []quire.Detail

func (p *problems) add(field, issue string) {
	*p = append(*p, quire.Detail{Field: field, Issue: issue})
}

func (p *problems) signer(s Signer) {
	if p.text("signer.email", s.Email, 1, MaxEmailLength) {
		if _, err := auth.NormalizeEmail(s.Email); err != nil {
			p.add("signer.email", "is not a valid e-mail address")
		}
	}
	p.text("signer.name", s.Name, MinNameLength, MaxNameLength)
	if p.text("signer.ip", s.IP, 0, MaxIPLength) && s.IP != "" {
		if _, err := netip.ParseAddr(s.IP); err != nil {
			p.add("signer.ip", "must be an IPv4 or IPv6 address")
		}
	}
	p.text("signer.userAgent", s.UserAgent, 0, MaxUserAgentLength)
}

func (p *problems) auditTrail(events []AuditEvent) {
	if len(events) == 0 {
		p.add("auditTrail", "must hold at least 1 event")
		return
	}
	submitted := false
	for i, e := range events {
		field := fmt.Sprintf("auditTrail[%d]", i)
		if p.text(field+".type", e.Type, 1, MaxEventTypeLength) && !eventType.MatchString(e.Type) {
			p.add(field+".type", "must be a lowercase identifier such as ready, scroll, field_change or submit")
		}
		if e.Timestamp.IsZero() {
			p.add(field+".timestamp", "is required")
		}
		p.json(field+".data", e.Data, MaxEventDataBytes)
		submitted = submitted || e.Type == "submit"
	}
	if !submitted {
		p.add("auditTrail", "must contain at least one event of type submit")
	}
}

// text checks a string of min to max characters (min 0: optional) without
// control characters, and reports whether it passed.
func (p *problems) text(field, s string, min, max int) bool {
	n := utf8.RuneCountInString(s)
	switch {
	case min > 0 && strings.TrimSpace(s) == "":
		p.add(field, "is required")
	case n > max || n < min:
		if min > 1 {
			p.add(field, fmt.Sprintf("must be %d to %d characters", min, max))
		} else {
			p.add(field, fmt.Sprintf("must be at most %d characters", max))
		}
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		p.add(field, "must not contain control characters")
	case !utf8.ValidString(s):
		p.add(field, "must be valid UTF-8")
	default:
		return true
	}
	return false
}

// json checks that v is at most max bytes of JSON.
func (p *problems) json(field string, v map[string]any, max int) {
	if v == nil {
		return
	}
	if b, err := json.Marshal(v); err != nil || len(b) > max {
		p.add(field, fmt.Sprintf("must be at most %d bytes of JSON", max))
	}
}
