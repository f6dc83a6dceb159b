// Package signing turns a sign request into a signed PDF: it validates the
// request strictly, obtains the document (inline or by URL), converts DOCX
// to PDF, appends the certificate pages and applies the signature.
package signing

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"time"

	"github.com/google/uuid"

	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/jsonreq"
)

// Limits of a sign request that are not configuration: they bound what an
// auditor can read on a certificate page.
const (
	MaxNameLength      = 200
	MaxUserAgentLength = 512
	MaxEventIDLength   = 128
	MaxEventTypeLength = 64
	MaxMetadataBytes   = 16 << 10
	MaxEventDataBytes  = 2 << 20 // a drawn signature PNG fits
)

// Request is a validated sign request (spec 2.1).
type Request struct {
	Document    Document
	Signer      Signer
	AuditTrail  []AuditEvent
	EventID     string         // the caller's, or a generated UUID
	Metadata    map[string]any // nil when absent
	Certificate bool           // append the certificate pages (default true)
}

// Document is the input: exactly one of Bytes (decoded from base64) and URL.
type Document struct {
	Bytes []byte
	URL   string
}

// Signer identifies who signs (spec 2.3).
type Signer struct {
	Email, Name, IP, UserAgent string
}

// AuditEvent is one interaction of the signer (spec 2.4).
type AuditEvent struct {
	Type      string
	Timestamp time.Time
	Data      map[string]any
}

// The fields each object of the request may hold; anything else is refused
// with a hint at the nearest known name.
var (
	topFields         = []string{"document", "signer", "auditTrail", "eventId", "metadata", "certificate"}
	signerFields      = []string{"email", "name", "ip", "userAgent"}
	eventFields       = []string{"type", "timestamp", "data"}
	certificateFields = []string{"enabled"}
	eventType         = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// DecodeRequest parses and validates a sign request, reporting every bad
// field at once. maxDocument bounds the decoded inline document.
func DecodeRequest(body []byte, maxDocument int64) (Request, error) {
	v := &validator{}
	req := Request{Certificate: true}
	top := v.Object("", json.RawMessage(body), topFields)
	if top == nil {
		return req, v.err()
	}
	req.Document = v.document(top["document"], maxDocument)
	req.Signer = v.signer(top["signer"])
	req.AuditTrail = v.auditTrail(top["auditTrail"])
	if req.EventID = v.OptionalString("eventId", top["eventId"], MaxEventIDLength); req.EventID == "" {
		req.EventID = uuid.NewString()
	}
	req.Metadata = v.FreeObject("metadata", top["metadata"], MaxMetadataBytes)
	if c := v.Object("certificate", top["certificate"], certificateFields); c != nil {
		if raw, ok := c["enabled"]; ok && !v.Decode("certificate.enabled", raw, &req.Certificate, "a boolean") {
			req.Certificate = true
		}
	}
	return req, v.err()
}

// DecodeVerifyRequest reads the JSON form of a verification request,
// {"document":{"base64":"..."}}, and returns the PDF bytes.
func DecodeVerifyRequest(body []byte, maxDocument int64) ([]byte, error) {
	v := &validator{}
	var pdf []byte
	if top := v.Object("", json.RawMessage(body), []string{"document"}); top != nil {
		if d := v.RequiredObject("document", top["document"], []string{"base64"}); d != nil {
			var b64 string
			if v.Decode("document.base64", d["base64"], &b64, "a string") {
				pdf = v.Base64("document.base64", b64, maxDocument)
			}
		}
	}
	return pdf, v.err()
}

// validator collects the details of everything wrong with a request.
type validator struct{ jsonreq.Validator }

func (v *validator) err() error { return v.Err("The sign request is not valid.") }

func (v *validator) document(raw json.RawMessage, maxBytes int64) Document {
	var d Document
	d.Bytes, d.URL = v.Document("document", raw, maxBytes)
	return d
}

func (v *validator) signer(raw json.RawMessage) Signer {
	var s Signer
	m := v.RequiredObject("signer", raw, signerFields)
	if m == nil {
		return s
	}
	s.Email = v.RequiredString("signer.email", m["email"], 254)
	if s.Email != "" {
		if _, err := auth.NormalizeEmail(s.Email); err != nil {
			v.Bad("signer.email", "is not a valid e-mail address")
		}
	}
	s.Name = v.RequiredString("signer.name", m["name"], MaxNameLength)
	s.IP = v.OptionalString("signer.ip", m["ip"], 64)
	if _, err := netip.ParseAddr(s.IP); s.IP != "" && err != nil {
		v.Bad("signer.ip", "must be an IPv4 or IPv6 address")
	}
	s.UserAgent = v.OptionalString("signer.userAgent", m["userAgent"], MaxUserAgentLength)
	return s
}

func (v *validator) auditTrail(raw json.RawMessage) []AuditEvent {
	if jsonreq.Absent(raw) {
		v.Bad("auditTrail", "is required")
		return nil
	}
	var items []json.RawMessage
	if !v.Decode("auditTrail", raw, &items, "an array") {
		return nil
	}
	if len(items) == 0 {
		v.Bad("auditTrail", "must hold at least 1 event")
		return nil
	}
	events := make([]AuditEvent, 0, len(items))
	submitted := false
	for i, item := range items {
		e := v.event(fmt.Sprintf("auditTrail[%d]", i), item)
		submitted = submitted || e.Type == "submit"
		events = append(events, e)
	}
	if !submitted {
		v.Bad("auditTrail", "must contain at least one event of type submit")
	}
	return events
}

func (v *validator) event(field string, raw json.RawMessage) AuditEvent {
	var e AuditEvent
	m := v.RequiredObject(field, raw, eventFields)
	if m == nil {
		return e
	}
	e.Type = v.RequiredString(field+".type", m["type"], MaxEventTypeLength)
	if e.Type != "" && !eventType.MatchString(e.Type) {
		v.Bad(field+".type", "must be a lowercase identifier such as ready, scroll, field_change or submit")
	}
	if ts := v.RequiredString(field+".timestamp", m["timestamp"], 64); ts != "" {
		e.Timestamp = v.utcTime(field+".timestamp", ts)
	}
	e.Data = v.FreeObject(field+".data", m["data"], MaxEventDataBytes)
	return e
}

// utcTime parses an ISO 8601 date-time in UTC (Z or +00:00).
func (v *validator) utcTime(field, s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		v.Bad(field, "must be an ISO 8601 date-time in UTC such as 2026-11-22T10:00:00Z")
		return time.Time{}
	}
	if _, offset := t.Zone(); offset != 0 {
		v.Bad(field, "must be in UTC (Z or +00:00)")
	}
	return t.UTC()
}
