package telemetry

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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
	MaxCreatedAt      = 256 // the raw dcterms:created text of the document, stored as sent
	maxLibraryVersion = 64
	maxHostname       = 253
	truncatedMetadata = `{"truncated":true}`
	emptyMetadata     = `{}`
)

// Request is one telemetry payload (spec 2.8) and the license key of its
// X-License-Key header. Unknown members are ignored, so that newer clients
// keep working; the deployed library sends its version as superdocVersion.
type Request struct {
	LicenseKey      string         `json:"-"`
	LibraryVersion  string         `json:"libraryVersion"`
	SuperdocVersion string         `json:"superdocVersion"`
	BrowserInfo     BrowserInfo    `json:"browserInfo"`
	Metadata        jsontext.Value `json:"metadata"`
	Events          []Event        `json:"events"`
}

// BrowserInfo: only the hostname is kept, to tell a customer's sites
// apart: hostname, or when it is empty the host of currentUrl (the page's
// origin, as the 2.x library sends it). User agent, URL and screen size
// are read (to check their types) and dropped.
type BrowserInfo struct {
	UserAgent  string `json:"userAgent"`
	CurrentURL string `json:"currentUrl"`
	Hostname   string `json:"hostname"`
	ScreenSize struct {
		Width  int `json:"width"`
		Height int `json:"height"`
	} `json:"screenSize"`
}

// Event is one document open. Only documentCreatedAt tells null (stored
// as NULL) from a string; the other members are decoded into plain
// values, which the decoder does not allocate (absent, null and "" are
// the same to validation). An open without documentId (the 2.x library
// sends null when the editor has no id) is valid: an anonymous open.
type Event struct {
	Timestamp         string  `json:"timestamp"`
	DocumentID        string  `json:"documentId"`
	DocumentCreatedAt *string `json:"documentCreatedAt"`
}

// Validate reports every field of r that cannot be stored, in one error
// with a detail per field.
func (r *Request) Validate() error {
	var details []quire.Detail
	if key := r.licenseKey(); len(key) > maxLicenseKey || !utf8.ValidString(key) {
		details = append(details, quire.Detail{Field: LicenseHeader, Issue: fmt.Sprintf("must be at most %d characters of UTF-8", maxLicenseKey)})
	}
	switch {
	case r.Events == nil:
		details = append(details, quire.Detail{Field: "events", Issue: "is required"})
	case len(r.Events) == 0 || len(r.Events) > maxEvents:
		details = append(details, quire.Detail{Field: "events", Issue: fmt.Sprintf("must hold 1 to %d events", maxEvents)})
	}
	if m := bytes.TrimSpace(r.Metadata); len(m) > 0 && string(m) != "null" && m[0] != '{' {
		details = append(details, quire.Detail{Field: "metadata", Issue: "must be an object"})
	}
	for i, e := range r.Events {
		details = e.validate(details, i)
	}
	if len(details) > 0 {
		return quire.Invalid("The telemetry payload is not valid.", details...)
	}
	return nil
}

// validate appends the problems of the i-th event to details.
func (e Event) validate(details []quire.Detail, i int) []quire.Detail {
	field := func(name string) string { return "events[" + strconv.Itoa(i) + "]." + name } // only for a problem
	switch id := e.DocumentID; {
	case len(id) > maxDocumentID:
		details = append(details, quire.Detail{Field: field("documentId"), Issue: fmt.Sprintf("must be at most %d characters", maxDocumentID)})
	case hasControl(id):
		details = append(details, quire.Detail{Field: field("documentId"), Issue: "must not contain control characters"})
	}
	switch ts := e.Timestamp; {
	case ts == "":
		details = append(details, quire.Detail{Field: field("timestamp"), Issue: "is required"})
	case !isTimestamp(ts):
		details = append(details, quire.Detail{Field: field("timestamp"), Issue: "must be an ISO 8601 date-time such as 2026-11-22T09:34:00.123Z"})
	}
	// Any text the document holds (it may wrap the date in white space, or
	// not be a date at all) is kept as sent; only NUL cannot be stored.
	if c := e.DocumentCreatedAt; c != nil && (len(*c) > MaxCreatedAt || strings.IndexByte(*c, 0) >= 0) {
		details = append(details, quire.Detail{Field: field("documentCreatedAt"), Issue: fmt.Sprintf("must be at most %d characters, without NUL", MaxCreatedAt)})
	}
	return details
}

// events returns the opens of a valid r, received at now. metaLimit caps
// the stored metadata: larger metadata is replaced by {"truncated":true},
// since dropping the open would lose a billable event for a cosmetic
// reason. hosts are the host lists of the licenses that have one: an open
// under such a license from another host (or from none) is OtherHost.
func (r *Request) events(now time.Time, metaLimit int, hosts map[string][]string) []quire.OpenEvent {
	key, meta, version, host := r.licenseKey(), metadata(r.Metadata, metaLimit), r.version(), r.hostname()
	own, listed := hosts[key]
	other := listed && !slices.Contains(own, host)
	out := make([]quire.OpenEvent, len(r.Events))
	for i, e := range r.Events {
		out[i] = quire.OpenEvent{LicenseKey: key, DocumentID: e.DocumentID, ReceivedAt: now, OccurredAt: e.Timestamp,
			DocumentCreatedAt: e.DocumentCreatedAt, LibraryVersion: version, Hostname: host, OtherHost: other, Metadata: meta}
	}
	return out
}

// licenseKey is the key of the header, the community key when it is empty.
func (r *Request) licenseKey() string {
	if key := strings.TrimSpace(r.LicenseKey); key != "" {
		return key
	}
	return quire.CommunityLicenseKey
}

func isTimestamp(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func (r *Request) version() string {
	v := r.LibraryVersion
	if v == "" {
		v = r.SuperdocVersion
	}
	return clean(v, maxLibraryVersion)
}

// hostname is the page's host name: browserInfo.hostname, else the host of
// browserInfo.currentUrl; "" when neither names one.
func (r *Request) hostname() string {
	host := r.BrowserInfo.Hostname
	if host == "" && r.BrowserInfo.CurrentURL != "" {
		if u, err := url.Parse(r.BrowserInfo.CurrentURL); err == nil {
			host = u.Hostname()
		}
	}
	return normalHost(clean(host, maxHostname))
}

// normalHost is the form in which host names are compared: lower case,
// without the brackets of an IPv6 address or a final dot.
func normalHost(host string) string {
	return strings.TrimSuffix(strings.Trim(strings.ToLower(host), "[]"), ".")
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

// metadata returns the stored form of a valid metadata member.
func metadata(raw jsontext.Value, limit int) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return emptyMetadata
	}
	compact := slices.Clone(raw)
	if compact.Compact() != nil || len(compact) > limit { // the decoder has checked it: only the limit applies
		return truncatedMetadata
	}
	return string(compact)
}
