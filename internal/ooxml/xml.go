package ooxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// XMLLimits bound the tree built from one part. Zero means no limit.
type XMLLimits struct {
	MaxElements int // elements in the part
	MaxDepth    int // nesting of elements
}

// Span is a byte range [Start, End) of a part.
type Span struct{ Start, End int64 }

// Element is one element of a parsed part, with where it lies in the
// part's bytes, so that edits can be spliced in without re-serializing and
// every byte not edited stays as it was.
type Element struct {
	Name     xml.Name // resolved namespace and local name
	Attr     []xml.Attr
	Outer    Span   // start tag to end tag
	Inner    Span   // the content; empty at Outer.End for a self-closing element
	Text     string // character data directly inside the element
	Children []*Element
	Parent   *Element
	text     strings.Builder // Text while the element is being read
}

// Doc is a parsed XML part.
type Doc struct {
	Data []byte
	Root *Element
}

// Parse builds the element tree of data. It fails on anything not
// well-formed and when a limit is crossed (errors wrapping ErrTooLarge).
func Parse(data []byte, l XMLLimits) (*Doc, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	doc := &Doc{Data: data}
	var (
		cur      *Element
		depth    int
		elements int
	)
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		end := d.InputOffset()
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			elements++
			if l.MaxDepth > 0 && depth > l.MaxDepth {
				return nil, fmt.Errorf("%w: elements nest deeper than %d", ErrTooLarge, l.MaxDepth)
			}
			if l.MaxElements > 0 && elements > l.MaxElements {
				return nil, fmt.Errorf("%w: more than %d elements", ErrTooLarge, l.MaxElements)
			}
			e := &Element{Name: t.Name, Attr: t.Attr, Outer: Span{Start: off}, Inner: Span{Start: end}, Parent: cur}
			if cur != nil {
				cur.Children = append(cur.Children, e)
			} else if doc.Root != nil {
				return nil, errors.New("more than one root element")
			} else {
				doc.Root = e
			}
			cur = e
		case xml.EndElement:
			cur.Outer.End, cur.Inner.End = end, off
			cur.Text = cur.text.String()
			cur.text = strings.Builder{}
			cur = cur.Parent
			depth--
		case xml.CharData:
			if cur != nil {
				cur.text.Write(t)
			}
		}
	}
	if doc.Root == nil {
		return nil, errors.New("no root element")
	}
	return doc, nil
}

// Is reports whether the element is space:local.
func (e *Element) Is(space, local string) bool {
	return e.Name.Space == space && e.Name.Local == local
}

// Child returns the first child named space:local, or nil.
func (e *Element) Child(space, local string) *Element {
	for _, c := range e.Children {
		if c.Is(space, local) {
			return c
		}
	}
	return nil
}

// Walk calls fn for e and its descendants in document order; fn returning
// false skips the element's descendants.
func (e *Element) Walk(fn func(*Element) bool) {
	if !fn(e) {
		return
	}
	for _, c := range e.Children {
		c.Walk(fn)
	}
}

// Find returns the first descendant of e (not e) named space:local, or nil.
func (e *Element) Find(space, local string) *Element {
	var found *Element
	for _, c := range e.Children {
		c.Walk(func(x *Element) bool {
			if found == nil && x.Is(space, local) {
				found = x
			}
			return found == nil
		})
		if found != nil {
			break
		}
	}
	return found
}

// AttrValue returns the value of the attribute space:local of e.
func (e *Element) AttrValue(space, local string) (string, bool) {
	return Attr(e.Attr, space, local)
}

// Attr returns the value of the attribute space:local in attrs.
func Attr(attrs []xml.Attr, space, local string) (string, bool) {
	for _, a := range attrs {
		if a.Name.Space == space && a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

// Bytes returns the bytes of a span of the part.
func (d *Doc) Bytes(s Span) []byte { return d.Data[s.Start:s.End] }

// Prefix returns the namespace prefix written in e's start tag ("" when
// none), for new elements meant to read like their neighbours.
func (d *Doc) Prefix(e *Element) string {
	tag := d.Data[e.Outer.Start+1 : e.Inner.Start]
	if i := bytes.IndexAny(tag, " \t\r\n/>"); i >= 0 {
		tag = tag[:i]
	}
	if prefix, _, ok := bytes.Cut(tag, []byte(":")); ok {
		return string(prefix)
	}
	return ""
}

// Binds reports whether the root element declares prefix ("" for the
// default namespace) as ns.
func (d *Doc) Binds(prefix, ns string) bool {
	for _, a := range d.Root.Attr {
		if (prefix == "" && a.Name.Space == "" && a.Name.Local == "xmlns") ||
			(prefix != "" && a.Name.Space == "xmlns" && a.Name.Local == prefix) {
			return a.Value == ns
		}
	}
	return false
}

// Xmlns returns the declaration of prefix as ns needed at a child of the
// root, or "" when the root already declares it.
func (d *Doc) Xmlns(prefix, ns string) string {
	if d.Binds(prefix, ns) {
		return ""
	}
	if prefix == "" {
		return ` xmlns="` + ns + `"`
	}
	return ` xmlns:` + prefix + `="` + ns + `"`
}

// AppendChild returns the part with frag added as the last child of the root.
func (d *Doc) AppendChild(frag string) ([]byte, error) {
	r := d.Root
	if r.Inner.Start < r.Outer.End {
		return Splice(d.Data, Edit{Span{r.Inner.End, r.Inner.End}, frag}), nil
	}
	// Self-closing root: "<name .../>" becomes "<name ...>frag</name>".
	tag := d.Data[r.Outer.Start:r.Outer.End]
	if !bytes.HasSuffix(tag, []byte("/>")) {
		return nil, errors.New("root element has no end tag")
	}
	name := bytes.TrimLeft(tag, "<")
	if i := bytes.IndexAny(name, " \t\r\n/"); i >= 0 {
		name = name[:i]
	}
	return Splice(d.Data, Edit{Span{r.Outer.End - 2, r.Outer.End}, ">" + frag + "</" + string(name) + ">"}), nil
}

// Edit replaces a span of a part with new text.
type Edit struct {
	Span Span
	With string
}

// Splice returns a copy of data with the edits applied. The edits must be
// in order and must not overlap.
func Splice(data []byte, edits ...Edit) []byte {
	n := int64(len(data))
	for _, e := range edits {
		n += int64(len(e.With)) - (e.Span.End - e.Span.Start)
	}
	out := make([]byte, 0, n)
	at := int64(0)
	for _, e := range edits {
		out = append(out, data[at:e.Span.Start]...)
		out = append(out, e.With...)
		at = e.Span.End
	}
	return append(out, data[at:]...)
}

// Escape returns s escaped for XML text and attribute values.
func Escape(s string) string {
	var b strings.Builder
	EscapeTo(&b, s)
	return b.String()
}

// EscapeTo writes s to b escaped for XML text and attribute values, as
// Escape returns it; text that needs no escaping is written as it is,
// without a copy.
func EscapeTo(b *strings.Builder, s string) {
	plain := !strings.ContainsFunc(s, func(r rune) bool {
		return r < 0x20 || r >= 0x7f || strings.ContainsRune(`"'&<>`, r)
	})
	if plain {
		b.WriteString(s)
		return
	}
	xml.EscapeText(b, []byte(s)) // writes to a strings.Builder never fail
}

// ValidText reports whether s can be stored in XML and read back
// unchanged: valid UTF-8 made of characters XML 1.0 allows.
func ValidText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		ok := r == '\t' || r == '\n' || r == '\r' ||
			(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || r >= 0x10000
		if !ok {
			return false
		}
	}
	return true
}
