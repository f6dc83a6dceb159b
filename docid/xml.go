package docid

import (
	"encoding/xml"
	"math"
	"strconv"

	"github.com/quire-dev/quire/internal/ooxml"
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

// child is a direct child element of the root that a scan asked for.
type child struct {
	elem  *ooxml.Element
	text  string // character data directly inside the element
	first string // character data directly inside its first child element
}

// partXML is a scanned XML part: enough structure to read the values
// identification needs and to splice edits in without re-serializing, so
// every byte not edited stays as it was.
type partXML struct {
	*ooxml.Doc
	children []child
}

// scanXML parses data and collects the direct children of the root
// element whose names satisfy want. It fails on anything not well-formed.
func scanXML(data []byte, want func(xml.Name) bool) (*partXML, error) {
	doc, err := ooxml.Parse(data, xmlLimits)
	if err != nil {
		return nil, err
	}
	x := &partXML{Doc: doc}
	for _, e := range doc.Root.Children {
		if !want(e.Name) {
			continue
		}
		c := child{elem: e, text: e.Text}
		if len(e.Children) > 0 {
			c.first = e.Children[0].Text
		}
		x.children = append(x.children, c)
	}
	return x, nil
}

// isName returns a matcher for one namespaced element name.
func isName(space, local string) func(xml.Name) bool {
	return func(n xml.Name) bool { return n.Space == space && n.Local == local }
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
		if v, _ := p.elem.AttrValue("", "pid"); v != "" {
			// pid is an xsd:int; larger values are invalid and cannot collide.
			if n, err := strconv.Atoi(v); err == nil && n > c.maxPID && n < math.MaxInt32 {
				c.maxPID = n
			}
		}
		if name, _ := p.elem.AttrValue("", "name"); name == "DocumentGuid" && c.prop < 0 {
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
