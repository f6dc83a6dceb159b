package telemetry

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/quire-dev/quire"
)

// LicenseHeader carries the license key of a telemetry request (spec 4.5).
const LicenseHeader = "X-License-Key"

// Limits of one telemetry payload (spec 2.8).
const (
	maxEvents         = 100
	maxDocumentID     = 256
	maxLicenseKey     = 256
	maxCreatedAt      = 64
	maxLibraryVersion = 64
	maxHostname       = 253
	truncatedMetadata = `{"truncated":true}`
	emptyMetadata     = `{}`
)

// payload is what editor libraries send. Unknown fields are ignored, so
// that newer clients keep working; the deployed library sends its version
// as superdocVersion.
type payload struct {
	LibraryVersion  *string        `json:"libraryVersion"`
	SuperdocVersion *string        `json:"superdocVersion"`
	BrowserInfo     *browserInfo   `json:"browserInfo"`
	Metadata        jsontext.Value `json:"metadata"`
	Events          []event        `json:"events"`
}

// browserInfo: only the hostname is kept, to tell a customer's sites
// apart. User agent, URL and screen size are read (to check their types)
// and dropped.
type browserInfo struct {
	UserAgent  string `json:"userAgent"`
	CurrentURL string `json:"currentUrl"`
	Hostname   string `json:"hostname"`
	ScreenSize *struct {
		Width  int `json:"width"`
		Height int `json:"height"`
	} `json:"screenSize"`
}

type event struct {
	Timestamp         *string `json:"timestamp"`
	DocumentID        *string `json:"documentId"`
	DocumentCreatedAt *string `json:"documentCreatedAt"`
}

// decodeOptions decode payloads as encoding/json did before: member names
// match in any case, and the last of duplicate members wins. (The decoder
// is the one of encoding/json/v2, which allocates less and takes about a
// tenth of intake's CPU time less per request; it refuses invalid UTF-8
// anywhere in the body, which PostgreSQL would refuse to store.)
var decodeOptions = json.JoinOptions(json.MatchCaseInsensitiveNames(true), jsontext.AllowDuplicateNames(true))

// Parse validates a telemetry payload and returns its events, received at
// now under the license key of the X-License-Key header (the community key
// when it is empty). metaLimit caps the stored metadata: larger metadata
// is replaced by {"truncated":true}, since dropping the open would lose a
// billable event for a cosmetic reason.
func Parse(body []byte, licenseKey string, now time.Time, metaLimit int) ([]quire.OpenEvent, error) {
	var p payload
	if err := json.Unmarshal(body, &p, decodeOptions); err != nil {
		return nil, decodeError(err)
	}
	licenseKey = strings.TrimSpace(licenseKey)
	if licenseKey == "" {
		licenseKey = quire.CommunityLicenseKey
	}
	var details []quire.Detail
	if len(licenseKey) > maxLicenseKey || !utf8.ValidString(licenseKey) {
		details = append(details, quire.Detail{Field: LicenseHeader, Issue: fmt.Sprintf("must be at most %d characters of UTF-8", maxLicenseKey)})
	}
	switch {
	case p.Events == nil:
		details = append(details, quire.Detail{Field: "events", Issue: "is required"})
	case len(p.Events) == 0 || len(p.Events) > maxEvents:
		details = append(details, quire.Detail{Field: "events", Issue: fmt.Sprintf("must hold 1 to %d events", maxEvents)})
	}
	meta, issue := metadata(p.Metadata, metaLimit)
	if issue != "" {
		details = append(details, quire.Detail{Field: "metadata", Issue: issue})
	}
	out := make([]quire.OpenEvent, 0, len(p.Events))
	for i, e := range p.Events {
		ev, bad := e.check(fmt.Sprintf("events[%d].", i))
		details = append(details, bad...)
		ev.LicenseKey, ev.ReceivedAt, ev.Metadata = licenseKey, now, meta
		ev.LibraryVersion, ev.Hostname = p.version(), p.hostname()
		out = append(out, ev)
	}
	if len(details) > 0 {
		return nil, quire.Invalid("The telemetry payload is not valid.", details...)
	}
	return out, nil
}

func (e event) check(prefix string) (quire.OpenEvent, []quire.Detail) {
	var ev quire.OpenEvent
	var bad []quire.Detail
	switch {
	case e.DocumentID == nil || *e.DocumentID == "":
		bad = append(bad, quire.Detail{Field: prefix + "documentId", Issue: "is required"})
	case len(*e.DocumentID) > maxDocumentID:
		bad = append(bad, quire.Detail{Field: prefix + "documentId", Issue: fmt.Sprintf("must be at most %d characters", maxDocumentID)})
	case hasControl(*e.DocumentID):
		bad = append(bad, quire.Detail{Field: prefix + "documentId", Issue: "must not contain control characters"})
	default:
		ev.DocumentID = *e.DocumentID
	}
	switch {
	case e.Timestamp == nil || *e.Timestamp == "":
		bad = append(bad, quire.Detail{Field: prefix + "timestamp", Issue: "is required"})
	case !isTimestamp(*e.Timestamp):
		bad = append(bad, quire.Detail{Field: prefix + "timestamp", Issue: "must be an ISO 8601 date-time such as 2026-11-22T09:34:00.123Z"})
	default:
		ev.OccurredAt = *e.Timestamp
	}
	if c := e.DocumentCreatedAt; c != nil && (len(*c) > maxCreatedAt || hasControl(*c)) {
		bad = append(bad, quire.Detail{Field: prefix + "documentCreatedAt", Issue: fmt.Sprintf("must be at most %d printable characters", maxCreatedAt)})
	}
	ev.DocumentCreatedAt = e.DocumentCreatedAt
	return ev, bad
}

func isTimestamp(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func (p payload) version() string {
	v := p.LibraryVersion
	if v == nil {
		v = p.SuperdocVersion
	}
	if v == nil {
		return ""
	}
	return clean(*v, maxLibraryVersion)
}

func (p payload) hostname() string {
	if p.BrowserInfo == nil {
		return ""
	}
	return clean(p.BrowserInfo.Hostname, maxHostname)
}

// hasControl reports control characters, which have no place in an
// identifier (and NUL cannot be stored in PostgreSQL text).
func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// clean drops control characters and caps the length of a descriptive
// field that is kept but not worth refusing an open for.
func clean(s string, n int) string {
	if hasControl(s) {
		s = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return -1
			}
			return r
		}, s)
	}
	return truncate(s, n)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) { // do not cut a character in two
		n--
	}
	return s[:n]
}

// metadata returns the stored form of the metadata object.
func metadata(raw jsontext.Value, limit int) (string, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return emptyMetadata, ""
	}
	if raw[0] != '{' {
		return "", "must be an object"
	}
	compact := slices.Clone(raw)
	if err := compact.Compact(); err != nil {
		return "", "must be an object"
	}
	if len(compact) > limit {
		return truncatedMetadata, ""
	}
	return string(compact), ""
}

// decodeError names the member whose JSON type is wrong, or where the
// JSON is broken.
func decodeError(err error) error {
	var se *json.SemanticError
	if errors.As(err, &se) && se.GoType != nil {
		return quire.Invalid("The telemetry payload is not valid.", quire.Detail{Field: fieldOf(se.JSONPointer), Issue: "must be " + jsonType(se.GoType.Kind().String())})
	}
	field := "body"
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		field = fieldOf(syn.JSONPointer)
	}
	return quire.Invalid("The body is not valid JSON.", quire.Detail{Field: field, Issue: err.Error()})
}

// fieldOf names the member at p as the other details do: events[0].documentId.
func fieldOf(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

func jsonType(kind string) string {
	switch kind {
	case "string", "ptr":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "int", "int64", "float64":
		return "a number"
	}
	return "of another type"
}
