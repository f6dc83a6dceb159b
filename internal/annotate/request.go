// Package annotate fills the content controls (w:sdt) of a DOCX template
// with text, images, signature stamps and table rows, as POST /v1/annotate
// does (../shared/spec/ANNOTATE.md). Only the parts holding a filled field
// are rewritten, and in them only the filled controls' content; every other
// byte of the package stays as it was, and the controls keep their
// properties, so a filled document can be filled again.
package annotate

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/ooxml"
)

// Field types.
const (
	TypeText      = "text"
	TypeImage     = "image"
	TypeSignature = "signature"
	TypeTable     = "table"
)

// Limits of a request that are not configuration.
const (
	MaxFields    = 1000  // fields in one request
	MaxDimension = 20000 // pixels of an image's requested width or height
	MaxLabel     = 200   // characters of a signature label
	MaxKey       = 1000  // characters of a field id or group
)

// Request is a fill request: the template and the fields to fill.
type Request struct {
	Document Document
	Fields   []Field
	PDF      bool // answer with the filled document converted to PDF

	// Malformed lists the fields that the request's adapter could not
	// decode; Validate reports them with the rest.
	Malformed []quire.Detail
}

// Document is the template: exactly one of Bytes and URL.
type Document = quire.Document

// Field is one field to fill: the content controls with w:id ID (the
// first in document order) or those whose JSON tag has group Group (all).
type Field struct {
	ID, Group string
	Type      string
	Value     string     // text, or an image's data: URI or URL
	Rows      [][]string // table
	Options   Options
}

// Options refine how a field is filled.
type Options struct {
	KeepTextNodeStyles bool    // text keeps the first run's formatting (default true)
	Width, Height      float64 // image and signature box in pixels; 0: not given
	ArcColor           string  // signature stamp colours, "#rgb" or "#rrggbb"
	TopLabel           Label
	BottomLabel        Label
	CopyRowStyle       bool // table rows copy the template row's run formatting
}

// Label is a line of text on a signature stamp.
type Label struct{ Text, Color string }

var hexColor = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// Validate reports everything wrong with the request in one validation error.
func (r *Request) Validate() error {
	bad := r.Document.Problems()
	add := func(field, format string, args ...any) {
		bad = append(bad, quire.Detail{Field: field, Issue: fmt.Sprintf(format, args...)})
	}
	if len(r.Fields) > MaxFields {
		add("fields", "must hold at most %d fields", MaxFields)
	}
	for i, f := range r.Fields {
		f.validate(fmt.Sprintf("fields[%d]", i), add)
	}
	return quire.InvalidRequest("The annotate request is not valid.", r.Malformed, bad)
}

func (f *Field) validate(at string, add func(field, format string, args ...any)) {
	if (f.ID == "") == (f.Group == "") {
		add(at, "must hold exactly one of id and group")
	}
	for _, k := range []struct{ name, v string }{{"id", f.ID}, {"group", f.Group}} {
		if len(k.v) > MaxKey || !ooxml.ValidText(k.v) {
			add(at+"."+k.name, "must be at most %d characters of text", MaxKey)
		}
	}
	switch f.Type {
	case TypeText:
		if !ooxml.ValidText(f.Value) {
			add(at+".value", "holds characters a document cannot carry")
		}
	case TypeImage, TypeSignature:
		if f.Type == TypeImage && !isImageRef(f.Value) {
			add(at+".value", "must be a data: URI (data:image/png;base64,...) or an http(s) URL of a PNG or JPEG image")
		}
		if f.Type == TypeSignature && !isImageRef(f.Value) && (f.Value == "" || !ooxml.ValidText(f.Value)) {
			add(at+".value", "must be an image (data: URI or URL) or a typed name")
		}
		for _, d := range []struct {
			name string
			v    float64
		}{{"width", f.Options.Width}, {"height", f.Options.Height}} {
			if d.v < 0 || d.v > MaxDimension {
				add(at+".options.dimensions."+d.name, "must be a number of pixels from 1 to %d", MaxDimension)
			}
		}
		f.Options.validateStamp(at+".options", add)
	case TypeTable:
		for _, row := range f.Rows {
			for _, cell := range row {
				if !ooxml.ValidText(cell) {
					add(at+".value", "holds characters a document cannot carry")
					return
				}
			}
		}
	default:
		add(at+".type", "must be one of text, image, signature, table")
	}
}

func (o *Options) validateStamp(at string, add func(field, format string, args ...any)) {
	for _, c := range []struct{ name, v string }{
		{"arcElement.color", o.ArcColor}, {"topLabel.color", o.TopLabel.Color}, {"bottomLabel.color", o.BottomLabel.Color},
	} {
		if c.v != "" && !hexColor.MatchString(c.v) {
			add(at+"."+c.name, "must be a hex colour such as #666 or #1e40af")
		}
	}
	for _, l := range []struct{ name, v string }{{"topLabel.text", o.TopLabel.Text}, {"bottomLabel.text", o.BottomLabel.Text}} {
		if len(l.v) > MaxLabel || !ooxml.ValidText(l.v) {
			add(at+"."+l.name, "must be at most %d characters of text", MaxLabel)
		}
	}
}

// isImageRef reports whether an image or signature value names an image
// rather than being text: a data: URI or an http(s) URL.
func isImageRef(v string) bool {
	lower := strings.ToLower(v)
	return strings.HasPrefix(lower, "data:") || strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://")
}

// key names the field in reports: its id, or "group:" and its group.
func (f *Field) key() string {
	if f.ID != "" {
		return f.ID
	}
	return "group:" + f.Group
}
