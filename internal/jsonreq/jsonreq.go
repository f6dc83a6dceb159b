// Package jsonreq decodes JSON request bodies strictly, the way every
// operation of the API does: fields outside an object's known names are
// refused with a hint at the nearest known one, and every bad field is
// reported at once, in the details of one validation error.
package jsonreq

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/quire-dev/quire"
)

// Validator collects the details of everything wrong with a request.
type Validator struct{ details []quire.Detail }

// Bad records that field has issue.
func (v *Validator) Bad(field, issue string) {
	v.details = append(v.details, quire.Detail{Field: field, Issue: issue})
}

// OK reports whether nothing bad was recorded.
func (v *Validator) OK() bool { return len(v.details) == 0 }

// Err returns nil when nothing was recorded, else a validation error with
// message and the details sorted by field.
func (v *Validator) Err(message string) error {
	if len(v.details) == 0 {
		return nil
	}
	sort.SliceStable(v.details, func(i, j int) bool { return v.details[i].Field < v.details[j].Field })
	return quire.Invalid(message, v.details...)
}

// Join names a field of an object: prefix.name, or name at the top.
func Join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// Object decodes an optional JSON object whose keys must be in allowed.
// It returns nil when raw is absent, null or not an object (reported).
func (v *Validator) Object(field string, raw json.RawMessage, allowed []string) map[string]json.RawMessage {
	if Absent(raw) {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		if field == "" {
			v.Bad("body", "must be a JSON object")
		} else {
			v.Bad(field, "must be an object")
		}
		return nil
	}
	for name := range m {
		if !slices.Contains(allowed, name) {
			v.Bad(Join(field, name), UnknownField(name, allowed))
		}
	}
	return m
}

// RequiredObject is Object for a field that must be present.
func (v *Validator) RequiredObject(field string, raw json.RawMessage, allowed []string) map[string]json.RawMessage {
	if Absent(raw) {
		v.Bad(field, "is required")
		return nil
	}
	return v.Object(field, raw, allowed)
}

// Absent reports whether a field is missing or null.
func Absent(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// Decode unmarshals raw into dst, reporting "must be what" when it does not fit.
func (v *Validator) Decode(field string, raw json.RawMessage, dst any, what string) bool {
	if err := json.Unmarshal(raw, dst); err != nil {
		v.Bad(field, "must be "+what)
		return false
	}
	return true
}

// Document decodes {"base64"|"url"}: exactly one, the inline document
// decoded and bounded by maxBytes.
func (v *Validator) Document(field string, raw json.RawMessage, maxBytes int64) (data []byte, url string) {
	m := v.RequiredObject(field, raw, []string{"base64", "url"})
	if m == nil {
		return nil, ""
	}
	var b64 string
	hasB64 := !Absent(m["base64"]) && v.Decode(field+".base64", m["base64"], &b64, "a string") && b64 != ""
	hasURL := !Absent(m["url"]) && v.Decode(field+".url", m["url"], &url, "a string") && url != ""
	switch {
	case hasB64 == hasURL:
		v.Bad(field, "must hold exactly one of base64 and url")
	case hasB64:
		data = v.Base64(field+".base64", b64, maxBytes)
	}
	if !hasURL {
		url = ""
	}
	return data, url
}

// Base64 decodes plain base64 or a base64 data: URI, refusing more than
// maxBytes before decoding it all.
func (v *Validator) Base64(field, s string, maxBytes int64) []byte {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, payload, found := strings.Cut(rest, ",")
		if !found || !strings.HasSuffix(meta, ";base64") {
			v.Bad(field, "a data: URI must be base64-encoded (data:<media type>;base64,...)")
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
		v.Bad(field, fmt.Sprintf("the document is larger than the limit of %d bytes", maxBytes))
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil || len(b) == 0 {
		v.Bad(field, "is not valid base64")
		return nil
	}
	if int64(len(b)) > maxBytes {
		v.Bad(field, fmt.Sprintf("the document is larger than the limit of %d bytes", maxBytes))
		return nil
	}
	return b
}

// RequiredString is OptionalString for a field that must be present and not empty.
func (v *Validator) RequiredString(field string, raw json.RawMessage, max int) string {
	if Absent(raw) {
		v.Bad(field, "is required")
		return ""
	}
	before := len(v.details)
	s := v.OptionalString(field, raw, max)
	if s == "" && len(v.details) == before {
		v.Bad(field, "must not be empty")
	}
	return s
}

// OptionalString decodes a string, trimmed, of at most max bytes and
// without control characters; "" when absent or bad (reported).
func (v *Validator) OptionalString(field string, raw json.RawMessage, max int) string {
	if Absent(raw) {
		return ""
	}
	var s string
	if !v.Decode(field, raw, &s, "a string") {
		return ""
	}
	s = strings.TrimSpace(s)
	switch {
	case len(s) > max:
		v.Bad(field, fmt.Sprintf("must be at most %d characters", max))
		return ""
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		v.Bad(field, "must not contain control characters")
		return ""
	}
	return s
}

// FreeObject decodes an optional object of the caller's choice, bounded in size.
func (v *Validator) FreeObject(field string, raw json.RawMessage, max int) map[string]any {
	if Absent(raw) {
		return nil
	}
	if len(raw) > max {
		v.Bad(field, fmt.Sprintf("must be at most %d bytes of JSON", max))
		return nil
	}
	var m map[string]any
	if !v.Decode(field, raw, &m, "an object") {
		return nil
	}
	return m
}

// UnknownField explains a field that is not accepted, suggesting the
// nearest known name when there is a plausible one.
func UnknownField(name string, allowed []string) string {
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
