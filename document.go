package quire

import (
	"slices"
	"sort"
	"strings"
)

// Document is the document of a request: exactly one of Bytes, sent with
// the request, and URL, which the service downloads. Signing, verifying
// and annotating take it alike.
type Document struct {
	Bytes []byte
	URL   string
}

// Problems reports a document that does not hold exactly one of Bytes and
// URL, as a detail of the field "document".
func (d Document) Problems() []Detail {
	if (len(d.Bytes) == 0) == (d.URL == "") {
		return []Detail{{Field: "document", Issue: "must hold exactly one of base64 and url"}}
	}
	return nil
}

// InvalidRequest is the VALIDATION_ERROR of a request, listing every bad
// field at once: those its adapter could not decode (malformed: a value of
// the wrong type, an unknown name), and those of found, the request's
// rules, that concern other fields. A field, its members and its parents
// are one: a field that did not decode is reported for that alone. The
// details are sorted by field; nil when there are none.
func InvalidRequest(message string, malformed, found []Detail) error {
	details := slices.Clip(malformed)
	for _, f := range found {
		if !slices.ContainsFunc(malformed, func(m Detail) bool { return within(f.Field, m.Field) || within(m.Field, f.Field) }) {
			details = append(details, f)
		}
	}
	if len(details) == 0 {
		return nil
	}
	sort.SliceStable(details, func(i, j int) bool { return details[i].Field < details[j].Field })
	return Invalid(message, details...)
}

// within reports whether field is parent or one of its members.
func within(field, parent string) bool {
	return field == parent || strings.HasPrefix(field, parent+".") || strings.HasPrefix(field, parent+"[")
}
