package docid

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// XML namespaces of the elements read and written.
const (
	nsW15          = "http://schemas.microsoft.com/office/word/2012/wordml"
	nsDCTerms      = "http://purl.org/dc/terms/"
	nsXSI          = "http://www.w3.org/2001/XMLSchema-instance"
	nsCoreProps    = "http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
	nsCustomProps  = "http://schemas.openxmlformats.org/officeDocument/2006/custom-properties"
	nsVTypes       = "http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"
	nsContentTypes = "http://schemas.openxmlformats.org/package/2006/content-types"
	nsRels         = "http://schemas.openxmlformats.org/package/2006/relationships"
)

// span is a byte range [start, end) of a part.
type span struct{ start, end int64 }

// child is a direct child element of the root that a scan asked for.
type child struct {
	elem  xml.StartElement
	span  span   // the whole element, start tag to end tag
	text  string // character data directly inside the element
	first string // character data directly inside its first child element
}

// partXML is a scanned XML part: enough structure to read the values
// identification needs and to splice edits in without re-serializing, so
// every byte not edited stays as it was.
type partXML struct {
	data     []byte
	root     xml.StartElement
	rootTag  span // the root start tag
	rootEnd  span // the root end tag; empty when the root is self-closing
	children []child
}

// scanXML tokenizes data and collects the direct children of the root
// element whose names satisfy want. It fails on anything not well-formed.
func scanXML(data []byte, want func(xml.Name) bool) (*partXML, error) {
	const (
		firstPending = iota // the wanted element's first child not seen yet
		firstReading
		firstDone
	)
	d := xml.NewDecoder(bytes.NewReader(data))
	x := &partXML{data: data}
	var (
		depth      int
		cur        = -1 // index in x.children of the wanted element being read
		firstState int
		text       strings.Builder
		first      strings.Builder
		seenRoot   bool
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
			switch {
			case depth == 1:
				if seenRoot {
					return nil, errors.New("more than one root element")
				}
				seenRoot = true
				x.root, x.rootTag = t.Copy(), span{off, end}
			case depth == 2 && want(t.Name):
				x.children = append(x.children, child{elem: t.Copy(), span: span{start: off}})
				cur, firstState = len(x.children)-1, firstPending
				text.Reset()
				first.Reset()
			case depth == 3 && cur >= 0 && firstState == firstPending:
				firstState = firstReading
			}
		case xml.EndElement:
			switch {
			case depth == 1:
				x.rootEnd = span{off, end}
			case depth == 2 && cur >= 0:
				c := &x.children[cur]
				c.span.end, c.text, c.first = end, text.String(), first.String()
				cur = -1
			case depth == 3 && firstState == firstReading:
				firstState = firstDone
			}
			depth--
		case xml.CharData:
			switch {
			case depth == 2 && cur >= 0:
				text.Write(t)
			case depth == 3 && firstState == firstReading:
				first.Write(t)
			}
		}
	}
	if !seenRoot {
		return nil, errors.New("no root element")
	}
	return x, nil
}

// isName returns a matcher for one namespaced element name.
func isName(space, local string) func(xml.Name) bool {
	return func(n xml.Name) bool { return n.Space == space && n.Local == local }
}

// attr returns the value of the attribute space:local of e.
func attr(e xml.StartElement, space, local string) (string, bool) {
	for _, a := range e.Attr {
		if a.Name.Space == space && a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

// binds reports whether the root element declares prefix ("" for the
// default namespace) as ns. Edits are spliced in as children of the root,
// so the root's declarations are the ones in scope there.
func (x *partXML) binds(prefix, ns string) bool {
	for _, a := range x.root.Attr {
		if (prefix == "" && a.Name.Space == "" && a.Name.Local == "xmlns") ||
			(prefix != "" && a.Name.Space == "xmlns" && a.Name.Local == prefix) {
			return a.Value == ns
		}
	}
	return false
}

// xmlns returns the declaration of prefix as ns needed at a child of the
// root, or "" when the root already declares it.
func (x *partXML) xmlns(prefix, ns string) string {
	if x.binds(prefix, ns) {
		return ""
	}
	if prefix == "" {
		return ` xmlns="` + ns + `"`
	}
	return ` xmlns:` + prefix + `="` + ns + `"`
}

// appendChild returns the part with frag added as the last child of the root.
func (x *partXML) appendChild(frag string) ([]byte, error) {
	if x.rootEnd.start < x.rootEnd.end {
		return splice(x.data, span{x.rootEnd.start, x.rootEnd.start}, frag), nil
	}
	// Self-closing root: "<name .../>" becomes "<name ...>frag</name>".
	tag := x.data[x.rootTag.start:x.rootTag.end]
	if !bytes.HasSuffix(tag, []byte("/>")) {
		return nil, errors.New("root element has no end tag")
	}
	name := bytes.TrimLeft(tag, "<")
	if i := bytes.IndexAny(name, " \t\r\n/"); i >= 0 {
		name = name[:i]
	}
	return splice(x.data, span{x.rootTag.end - 2, x.rootTag.end}, ">"+frag+"</"+string(name)+">"), nil
}

// splice returns a copy of data with the range s replaced by frag.
func splice(data []byte, s span, frag string) []byte {
	out := make([]byte, 0, int64(len(data))-(s.end-s.start)+int64(len(frag)))
	out = append(out, data[:s.start]...)
	out = append(out, frag...)
	return append(out, data[s.end:]...)
}

// escape returns s escaped for XML text and attribute values.
func escape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) // writes to a strings.Builder never fail
	return b.String()
}

// validText reports whether s can be stored in XML and read back unchanged:
// valid UTF-8 made of characters XML 1.0 allows.
func validText(s string) bool {
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

// customProps is a scanned docProps/custom.xml.
type customProps struct {
	*partXML
	guid   string // DocumentGuid value, "" when missing
	prop   int    // index of the DocumentGuid property in children, -1 when absent
	maxPID int    // highest pid in use, at least 1
}

func scanCustom(data []byte) (customProps, error) {
	x, err := scanXML(data, isName(nsCustomProps, "property"))
	if err != nil {
		return customProps{}, err
	}
	c := customProps{partXML: x, prop: -1, maxPID: 1}
	for i, p := range x.children {
		if v, _ := attr(p.elem, "", "pid"); v != "" {
			// pid is an xsd:int; larger values are invalid and cannot collide.
			if n, err := strconv.Atoi(v); err == nil && n > c.maxPID && n < math.MaxInt32 {
				c.maxPID = n
			}
		}
		if name, _ := attr(p.elem, "", "name"); name == "DocumentGuid" && c.prop < 0 {
			c.prop, c.guid = i, p.first
		}
	}
	return c, nil
}

// coreProps is a scanned docProps/core.xml.
type coreProps struct {
	*partXML
	created string // dcterms:created text, "" when missing
	elem    int    // index of dcterms:created in children, -1 when absent
}

func scanCore(data []byte) (coreProps, error) {
	x, err := scanXML(data, isName(nsDCTerms, "created"))
	if err != nil {
		return coreProps{}, err
	}
	c := coreProps{partXML: x, elem: -1}
	if len(x.children) > 0 {
		c.elem, c.created = 0, x.children[0].text
	}
	return c, nil
}
