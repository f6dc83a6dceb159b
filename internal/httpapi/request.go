package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/signing"
)

// The JSON request bodies of the signing routes are decoded here: their
// shape (known fields, with a hint at the nearest name for a near miss;
// the type of each value; base64 and dates) is the adapter's business, the
// rules of the values the request type's own (signing.Request.Validate),
// which the service applies once, reporting the fields that did not decode
// (the request's Malformed) with those that break a rule.

// The fields each object of a sign request may hold; anything else is
// refused with a hint at the nearest known name. certificate.enable is a
// synonym of enabled that the hosted API's e-sign demo sends.
var (
	signFields        = []string{"document", "signer", "auditTrail", "eventId", "metadata", "certificate"}
	verifyFields      = []string{"document"}
	documentFields    = []string{"base64", "url"}
	signerFields      = []string{"email", "name", "ip", "userAgent"}
	eventFields       = []string{"type", "timestamp", "data"}
	certificateFields = []string{"enabled", "enable"}
)

const (
	signInvalid   = "The sign request is not valid."
	verifyInvalid = "The verify request is not valid."
)

// decodeSignRequest decodes a sign request. A body that is not a JSON
// object is refused here; any other field that does not decode is left in
// the request's Malformed, for the service's Validate to report with the
// fields that break the request's rules.
func decodeSignRequest(body []byte, maxDocument int64) (signing.Request, error) {
	d, body := newDecoder(body, maxDocument, signingRoom)
	return d.signRequest(body, maxDocument)
}

func (d *decoder) signRequest(body []byte, maxDocument int64) (signing.Request, error) {
	req := signing.Request{Certificate: true}
	top := d.object("", json.RawMessage(body), signFields)
	if top == nil {
		return req, d.err(signInvalid)
	}
	req.Document = d.document(top["document"], maxDocument)
	if s := d.requiredObject("signer", top["signer"], signerFields); s != nil {
		req.Signer = signing.Signer{Email: d.string("signer.email", s["email"]), Name: d.string("signer.name", s["name"]),
			IP: d.string("signer.ip", s["ip"]), UserAgent: d.string("signer.userAgent", s["userAgent"])}
	}
	req.AuditTrail = d.auditTrail(top["auditTrail"])
	req.EventID = d.string("eventId", top["eventId"])
	req.Metadata = d.freeObject("metadata", top["metadata"], signing.MaxMetadataBytes)
	if c := d.object("certificate", top["certificate"], certificateFields); c != nil {
		req.Certificate = d.certificate(c)
	}
	req.Malformed = d.details
	return req, nil
}

// decodeVerifyRequest decodes the JSON form of a verify request,
// {"document":{"base64":"..."}} or {"document":{"url":"..."}}. Its rule
// (exactly one of them) is the service's (signing.Service.Verify).
func decodeVerifyRequest(body []byte, maxDocument int64) (quire.Document, error) {
	d, body := newDecoder(body, maxDocument, 0)
	var doc quire.Document
	if top := d.object("", json.RawMessage(body), verifyFields); top != nil {
		doc = d.document(top["document"], maxDocument)
	}
	return doc, d.err(verifyInvalid)
}

// decoder collects the details of everything wrong with a request's shape.
type decoder struct {
	details []quire.Detail
	inline  []byte // document.base64, decoded ahead (see newDecoder); nil when it was not
}

// newDecoder returns a decoder for body, and body to decode. A document
// sent as plain base64 (no white space, escapes or data: prefix) is most of
// the body: it is decoded here, in one pass, into a buffer with room bytes
// to spare (what signing appends), and the body to decode holds an empty string in
// its place, so that the JSON decoder does not walk it again and again.
// Anything else about the document (its absence, a second one, a value
// that is not plain base64 or is too large) leaves the body as it is, for
// the decoder to read and report as usual.
func newDecoder(body []byte, maxDocument int64, room int) (*decoder, []byte) {
	start, end, ok := documentBase64(body)
	if !ok || int64(base64.StdEncoding.DecodedLen(end-start)) > maxDocument+2 {
		return &decoder{}, body
	}
	doc, ok := decodePlainBase64(body[start:end], room)
	if !ok || int64(len(doc)) > maxDocument {
		return &decoder{}, body
	}
	rest := make([]byte, 0, len(body)-(end-start))
	return &decoder{inline: doc}, append(append(rest, body[:start]...), body[end:]...)
}

// signingRoom is the spare capacity of a document to sign: the incremental
// update of a signing (certificate pages, signature) is written after the
// document in the same buffer.
const signingRoom = 256 << 10

// decodePlainBase64 decodes s, padded or not, when it is base64 and
// nothing else, into a buffer with room bytes to spare. Line breaks, which the base64 decoder skips, are not
// allowed raw in a JSON string: they leave the body to the JSON decoder,
// which refuses it.
func decodePlainBase64(s []byte, room int) ([]byte, bool) {
	if bytes.IndexByte(s, '\n') >= 0 || bytes.IndexByte(s, '\r') >= 0 {
		return nil, false
	}
	enc := base64.StdEncoding // padded; or unpadded with nothing to pad
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	b := make([]byte, enc.DecodedLen(len(s)), enc.DecodedLen(len(s))+room)
	n, err := enc.Decode(b, s)
	return b[:n], err == nil && n > 0
}

// documentBase64 finds the string value of document.base64 in a JSON body
// (between its quotes) when the body's object has one "document" member
// holding one "base64" member, spelled without escapes. It reads only the
// structure; the JSON decoder checks the rest of the body.
func documentBase64(body []byte) (start, end int, ok bool) {
	s := jsonScan{b: body}
	found := 0
	ok = s.members(func(key []byte) bool {
		if string(key) != `"document"` || s.peek() != '{' {
			return s.skipValue()
		}
		return s.members(func(key []byte) bool {
			if string(key) != `"base64"` || s.peek() != '"' {
				return s.skipValue()
			}
			from := s.i
			if !s.skipString() {
				return false
			}
			start, end, found = from+1, s.i-1, found+1
			return true
		})
	})
	return start, end, ok && found == 1
}

// jsonScan walks the structure of JSON text, finding the end of strings
// with a fast search for quotes. It does not validate.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) peek() byte {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
	if s.i == len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// members calls member for each member of the object at s, with s at the
// member's value and its key as written (quotes included).
func (s *jsonScan) members(member func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		from := s.i
		if s.peek() != '"' || !s.skipString() {
			return false
		}
		key := s.b[from:s.i]
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.peek()
		if !member(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// skipString moves past the string at s.
func (s *jsonScan) skipString() bool {
	for i := s.i + 1; ; {
		j := bytes.IndexByte(s.b[i:], '"')
		if j < 0 {
			return false
		}
		i += j
		escapes := 0
		for k := i - 1; k > s.i && s.b[k] == '\\'; k-- {
			escapes++
		}
		i++
		if escapes%2 == 0 {
			s.i = i
			return true
		}
	}
}

// skipValue moves past the value at s: a string, an object or array with
// everything in it, or a literal.
func (s *jsonScan) skipValue() bool {
	depth := 0
	for {
		switch c := s.peek(); c {
		case 0:
			return false
		case '"':
			if !s.skipString() {
				return false
			}
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			if depth == 0 {
				return true
			}
			depth--
			s.i++
		case ',', ':':
			if depth == 0 {
				return c == ','
			}
			s.i++
		default:
			s.i++
		}
		if depth == 0 && s.peek() != 0 && strings.IndexByte(",}]", s.peek()) >= 0 {
			return true
		}
	}
}

func (d *decoder) bad(field, issue string) {
	d.details = append(d.details, quire.Detail{Field: field, Issue: issue})
}

// err is the VALIDATION_ERROR of everything found wrong with the request's
// shape, or nil when nothing was.
func (d *decoder) err(message string) error {
	return quire.InvalidRequest(message, d.details, nil)
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// object decodes an optional JSON object whose keys must be in allowed.
// It returns nil when raw is absent, null or not an object (reported).
func (d *decoder) object(field string, raw json.RawMessage, allowed []string) map[string]json.RawMessage {
	if isAbsent(raw) {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		if field == "" {
			d.bad("body", "must be a JSON object")
		} else {
			d.bad(field, "must be an object")
		}
		return nil
	}
	for name := range m {
		if !slices.Contains(allowed, name) {
			d.bad(join(field, name), unknownField(name, allowed))
		}
	}
	return m
}

// requiredObject is object for a field that must be present.
func (d *decoder) requiredObject(field string, raw json.RawMessage, allowed []string) map[string]json.RawMessage {
	if isAbsent(raw) {
		d.bad(field, "is required")
		return nil
	}
	return d.object(field, raw, allowed)
}

func isAbsent(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func (d *decoder) decode(field string, raw json.RawMessage, dst any, what string) bool {
	if err := json.Unmarshal(raw, dst); err != nil {
		d.bad(field, "must be "+what)
		return false
	}
	return true
}

// string decodes an optional string, without surrounding white space.
func (d *decoder) string(field string, raw json.RawMessage) string {
	var s string
	if isAbsent(raw) || !d.decode(field, raw, &s, "a string") {
		return ""
	}
	return strings.TrimSpace(s)
}

func (d *decoder) document(raw json.RawMessage, maxBytes int64) quire.Document {
	var doc quire.Document
	m := d.requiredObject("document", raw, documentFields)
	if m == nil {
		return doc
	}
	doc.URL = d.string("document.url", m["url"])
	if b64 := d.string("document.base64", m["base64"]); b64 != "" {
		doc.Bytes = d.base64Document(b64, maxBytes)
	} else if d.inline != nil {
		doc.Bytes = d.inline
	}
	return doc
}

// base64Document decodes plain base64 or a data: URI, refusing more than
// maxBytes before decoding it all.
func (d *decoder) base64Document(s string, maxBytes int64) []byte {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, payload, found := strings.Cut(rest, ",")
		if !found || !strings.HasSuffix(meta, ";base64") {
			d.bad("document.base64", "a data: URI must be base64-encoded (data:application/pdf;base64,...)")
			return nil
		}
		s = payload
	}
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 { // line breaks are common in base64 from mail tools
		s = strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, s)
	}
	tooLarge := fmt.Sprintf("the document is larger than the limit of %d bytes", maxBytes)
	if int64(base64.StdEncoding.DecodedLen(len(s))) > maxBytes+2 {
		d.bad("document.base64", tooLarge)
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil || len(b) == 0 {
		d.bad("document.base64", "is not valid base64")
		return nil
	}
	if int64(len(b)) > maxBytes {
		d.bad("document.base64", tooLarge)
		return nil
	}
	return b
}

func (d *decoder) auditTrail(raw json.RawMessage) []signing.AuditEvent {
	if isAbsent(raw) {
		d.bad("auditTrail", "is required")
		return nil
	}
	var items []json.RawMessage
	if !d.decode("auditTrail", raw, &items, "an array") {
		return nil
	}
	events := make([]signing.AuditEvent, 0, len(items))
	for i, item := range items {
		field := fmt.Sprintf("auditTrail[%d]", i)
		var e signing.AuditEvent
		if m := d.requiredObject(field, item, eventFields); m != nil {
			e.Type = d.string(field+".type", m["type"])
			if ts := d.string(field+".timestamp", m["timestamp"]); ts != "" {
				e.Timestamp = d.time(field+".timestamp", ts)
			}
			e.Data = d.freeObject(field+".data", m["data"], signing.MaxEventDataBytes)
		}
		events = append(events, e)
	}
	return events
}

// time parses an RFC 3339 date-time, with any offset, into UTC.
func (d *decoder) time(field, s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		d.bad(field, "must be an RFC 3339 date-time such as 2026-11-22T10:00:00Z or 2026-11-22T11:00:00+01:00")
		return time.Time{}
	}
	return t.UTC()
}

// freeObject decodes an optional object of the caller's choice, refusing
// more than max bytes before decoding it.
func (d *decoder) freeObject(field string, raw json.RawMessage, max int) map[string]any {
	if isAbsent(raw) {
		return nil
	}
	if len(raw) > max {
		d.bad(field, fmt.Sprintf("must be at most %d bytes of JSON", max))
		return nil
	}
	var m map[string]any
	if !d.decode(field, raw, &m, "an object") {
		return nil
	}
	return m
}

// certificate reads certificate.enabled, or its synonym enable; the two
// must agree when both are sent. Absent, the pages are appended.
func (d *decoder) certificate(c map[string]json.RawMessage) bool {
	on := map[string]bool{}
	for _, name := range certificateFields {
		var v bool
		if raw, ok := c[name]; ok && !isAbsent(raw) && d.decode("certificate."+name, raw, &v, "a boolean") {
			on[name] = v
		}
	}
	enabled, hasEnabled := on["enabled"]
	enable, hasEnable := on["enable"]
	switch {
	case hasEnabled && hasEnable && enabled != enable:
		d.bad("certificate.enable", "contradicts certificate.enabled")
	case hasEnabled:
		return enabled
	case hasEnable:
		return enable
	}
	return true
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
