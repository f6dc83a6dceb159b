// Package signing turns a sign request into a signed PDF: it validates the
// request strictly, obtains the document (inline or by URL), converts DOCX
// to PDF, appends the certificate pages and applies the signature.
package signing

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/auth"
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
	documentFields    = []string{"base64", "url"}
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
	top := v.object("", json.RawMessage(body), topFields)
	if top == nil {
		return req, v.err()
	}
	req.Document = v.document(top["document"], maxDocument)
	req.Signer = v.signer(top["signer"])
	req.AuditTrail = v.auditTrail(top["auditTrail"])
	if req.EventID = v.optionalString("eventId", top["eventId"], MaxEventIDLength); req.EventID == "" {
		req.EventID = uuid.NewString()
	}
	req.Metadata = v.freeObject("metadata", top["metadata"], MaxMetadataBytes)
	if c := v.object("certificate", top["certificate"], certificateFields); c != nil {
		if raw, ok := c["enabled"]; ok && !v.decode("certificate.enabled", raw, &req.Certificate, "a boolean") {
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
	if top := v.object("", json.RawMessage(body), []string{"document"}); top != nil {
		if d := v.requiredObject("document", top["document"], []string{"base64"}); d != nil {
			var b64 string
			if v.decode("document.base64", d["base64"], &b64, "a string") {
				pdf = v.base64Document(b64, maxDocument)
			}
		}
	}
	return pdf, v.err()
}

// validator collects the details of everything wrong with a request.
type validator struct{ details []quire.Detail }

func (v *validator) bad(field, issue string) {
	v.details = append(v.details, quire.Detail{Field: field, Issue: issue})
}

func (v *validator) err() error {
	if len(v.details) == 0 {
		return nil
	}
	sort.SliceStable(v.details, func(i, j int) bool { return v.details[i].Field < v.details[j].Field })
	return quire.Invalid("The sign request is not valid.", v.details...)
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// object decodes an optional JSON object whose keys must be in allowed.
// It returns nil when raw is absent, null or not an object (reported).
func (v *validator) object(field string, raw json.RawMessage, allowed []string) map[string]json.RawMessage {
	if isAbsent(raw) {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		if field == "" {
			v.bad("body", "must be a JSON object")
		} else {
			v.bad(field, "must be an object")
		}
		return nil
	}
	for name := range m {
		if !slices.Contains(allowed, name) {
			v.bad(join(field, name), unknownField(name, allowed))
		}
	}
	return m
}

// requiredObject is object for a field that must be present.
func (v *validator) requiredObject(field string, raw json.RawMessage, allowed []string) map[string]json.RawMessage {
	if isAbsent(raw) {
		v.bad(field, "is required")
		return nil
	}
	return v.object(field, raw, allowed)
}

func isAbsent(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func (v *validator) decode(field string, raw json.RawMessage, dst any, what string) bool {
	if err := json.Unmarshal(raw, dst); err != nil {
		v.bad(field, "must be "+what)
		return false
	}
	return true
}

func (v *validator) document(raw json.RawMessage, maxBytes int64) Document {
	var d Document
	m := v.requiredObject("document", raw, documentFields)
	if m == nil {
		return d
	}
	var b64 string
	hasB64 := !isAbsent(m["base64"]) && v.decode("document.base64", m["base64"], &b64, "a string") && b64 != ""
	hasURL := !isAbsent(m["url"]) && v.decode("document.url", m["url"], &d.URL, "a string") && d.URL != ""
	switch {
	case hasB64 == hasURL:
		v.bad("document", "must hold exactly one of base64 and url")
	case hasB64:
		d.Bytes = v.base64Document(b64, maxBytes)
	}
	if !hasURL {
		d.URL = ""
	}
	return d
}

// base64Document decodes plain base64 or a data: URI, refusing more than
// maxBytes before decoding it all.
func (v *validator) base64Document(s string, maxBytes int64) []byte {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, payload, found := strings.Cut(rest, ",")
		if !found || !strings.HasSuffix(meta, ";base64") {
			v.bad("document.base64", "a data: URI must be base64-encoded (data:application/pdf;base64,...)")
			return nil
		}
		s = payload
	}
	s = strings.Map(func(r rune) rune { // line breaks are common in base64 from mail tools
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	if int64(base64.StdEncoding.DecodedLen(len(s))) > maxBytes+2 {
		v.bad("document.base64", fmt.Sprintf("the document is larger than the limit of %d bytes", maxBytes))
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil || len(b) == 0 {
		v.bad("document.base64", "is not valid base64")
		return nil
	}
	if int64(len(b)) > maxBytes {
		v.bad("document.base64", fmt.Sprintf("the document is larger than the limit of %d bytes", maxBytes))
		return nil
	}
	return b
}

func (v *validator) signer(raw json.RawMessage) Signer {
	var s Signer
	m := v.requiredObject("signer", raw, signerFields)
	if m == nil {
		return s
	}
	s.Email = v.requiredString("signer.email", m["email"], 254)
	if s.Email != "" {
		if _, err := auth.NormalizeEmail(s.Email); err != nil {
			v.bad("signer.email", "is not a valid e-mail address")
		}
	}
	s.Name = v.requiredString("signer.name", m["name"], MaxNameLength)
	s.IP = v.optionalString("signer.ip", m["ip"], 64)
	if _, err := netip.ParseAddr(s.IP); s.IP != "" && err != nil {
		v.bad("signer.ip", "must be an IPv4 or IPv6 address")
	}
	s.UserAgent = v.optionalString("signer.userAgent", m["userAgent"], MaxUserAgentLength)
	return s
}

func (v *validator) auditTrail(raw json.RawMessage) []AuditEvent {
	if isAbsent(raw) {
		v.bad("auditTrail", "is required")
		return nil
	}
	var items []json.RawMessage
	if !v.decode("auditTrail", raw, &items, "an array") {
		return nil
	}
	if len(items) == 0 {
		v.bad("auditTrail", "must hold at least 1 event")
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
		v.bad("auditTrail", "must contain at least one event of type submit")
	}
	return events
}

func (v *validator) event(field string, raw json.RawMessage) AuditEvent {
	var e AuditEvent
	m := v.requiredObject(field, raw, eventFields)
	if m == nil {
		return e
	}
	e.Type = v.requiredString(field+".type", m["type"], MaxEventTypeLength)
	if e.Type != "" && !eventType.MatchString(e.Type) {
		v.bad(field+".type", "must be a lowercase identifier such as ready, scroll, field_change or submit")
	}
	if ts := v.requiredString(field+".timestamp", m["timestamp"], 64); ts != "" {
		e.Timestamp = v.utcTime(field+".timestamp", ts)
	}
	e.Data = v.freeObject(field+".data", m["data"], MaxEventDataBytes)
	return e
}

// utcTime parses an ISO 8601 date-time in UTC (Z or +00:00).
func (v *validator) utcTime(field, s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		v.bad(field, "must be an ISO 8601 date-time in UTC such as 2026-11-22T10:00:00Z")
		return time.Time{}
	}
	if _, offset := t.Zone(); offset != 0 {
		v.bad(field, "must be in UTC (Z or +00:00)")
	}
	return t.UTC()
}

func (v *validator) requiredString(field string, raw json.RawMessage, max int) string {
	if isAbsent(raw) {
		v.bad(field, "is required")
		return ""
	}
	before := len(v.details)
	s := v.optionalString(field, raw, max)
	if s == "" && len(v.details) == before {
		v.bad(field, "must not be empty")
	}
	return s
}

func (v *validator) optionalString(field string, raw json.RawMessage, max int) string {
	if isAbsent(raw) {
		return ""
	}
	var s string
	if !v.decode(field, raw, &s, "a string") {
		return ""
	}
	s = strings.TrimSpace(s)
	switch {
	case len(s) > max:
		v.bad(field, fmt.Sprintf("must be at most %d characters", max))
		return ""
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		v.bad(field, "must not contain control characters")
		return ""
	}
	return s
}

// freeObject decodes an optional object of the caller's choice, bounded in size.
func (v *validator) freeObject(field string, raw json.RawMessage, max int) map[string]any {
	if isAbsent(raw) {
		return nil
	}
	if len(raw) > max {
		v.bad(field, fmt.Sprintf("must be at most %d bytes of JSON", max))
		return nil
	}
	var m map[string]any
	if !v.decode(field, raw, &m, "an object") {
		return nil
	}
	return m
}

// unknownField explains a field that is not accepted, suggesting the
// nearest known name when there is a plausible one.
func unknownField(name string, allowed []string) string {
	best, dist := "", 3
	for _, a := range allowed {
		d := distance(strings.ToLower(name), strings.ToLower(a))
		if strings.HasPrefix(strings.ToLower(a), strings.ToLower(name)) || strings.HasPrefix(strings.ToLower(name), strings.ToLower(a)) {
			d = min(d, 1)
		}
		if d < dist {
			best, dist = a, d
		}
	}
	if best != "" {
		return "is not a known field; did you mean " + best + "?"
	}
	return "is not a known field (known: " + strings.Join(allowed, ", ") + ")"
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
