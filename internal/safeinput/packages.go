package safeinput

import (
	"bytes"
	"html"
	"path"
	"regexp"
	"strings"

	"github.com/quire-dev/quire/internal/ooxml"
)

// An OOXML (DOCX, XLSX, PPTX) or OpenDocument (ODT, ODS, ODP) package
// loses its references to content outside itself before LibreOffice sees
// it (one layer of the three of the LibreOffice engine's sandbox.go):
//
//   - OOXML relationships with TargetMode="External", except hyperlinks
//     (which a PDF keeps as links and nothing loads): linked images,
//     linked OLE objects, subdocuments, attached templates, a workbook's
//     links to other workbooks, linked media of slides, ...;
//   - in OpenDocument content and styles, xlink:href attributes that
//     leave the package (a URL with a scheme, an absolute path, a path
//     through ..), except on hyperlinks; a linked image, section, sheet
//     or object then has nothing to load;
//   - in SVG images of either, the DOCTYPE (external entities), style
//     sheet instructions, href and xlink:href other than to a fragment of
//     the image itself or to an inline raster image, and CSS url()
//     references likewise (cleanCSS).
//
// Parts that need no change are copied as they are, still compressed; a
// package that needs none is passed on unchanged.

var (
	relationship  = regexp.MustCompile(`<Relationship\s[^>]*?(?:/>|>\s*</Relationship>)`)
	externalMode  = regexp.MustCompile(`TargetMode\s*=\s*["']External["']`)
	hyperlinkType = regexp.MustCompile(`Type\s*=\s*["'][^"']*/hyperlink["']`)
	// startTag matches a start tag, its name and its attributes.
	startTag = regexp.MustCompile(`<([\w.-]+(?::[\w.-]+)?)(\s[^<>]*?)?(/?)>`)
	hrefAttr = regexp.MustCompile(`(\s(?:[\w.-]+:)?href\s*=\s*)(?:"([^"]*)"|'([^']*)')`)
	doctype  = regexp.MustCompile(`(?is)<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>`)
	stylePI  = regexp.MustCompile(`(?is)<\?xml-stylesheet.*?\?>`)
)

// withoutOutsideLinks adds to e the parts of the package without their
// references to content outside it.
func (p *officePackage) withoutOutsideLinks(e *ooxml.Edits) {
	for _, name := range p.zip.Names() {
		fix := outsideLinksFix(name, p.from)
		if fix == nil {
			continue
		}
		body := p.part(e, name)
		if body == nil {
			continue // too large to rewrite here; the other layers stand
		}
		if out := fix(body); !bytes.Equal(out, body) {
			e.Set(p.zip, name, out)
		}
	}
}

// outsideLinksFix returns the rewrite for the part name of a package of
// format from, or nil.
func outsideLinksFix(name, from string) func([]byte) []byte {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".svg"):
		return sanitizeSVG
	case ooxmlMainParts[from] != "" && strings.HasSuffix(lower, ".rels"):
		return withoutExternalRelationships
	case odfMimeTypes[from] != "" && (path.Base(lower) == "content.xml" || path.Base(lower) == "styles.xml"):
		return withoutOutsideHrefs
	}
	return nil
}

// withoutExternalRelationships drops the external relationships of a
// .rels part, hyperlinks excepted.
func withoutExternalRelationships(b []byte) []byte {
	if !bytes.Contains(b, []byte("External")) {
		return b
	}
	return relationship.ReplaceAllFunc(b, func(r []byte) []byte {
		if externalMode.Match(r) && !hyperlinkType.Match(r) {
			return nil
		}
		return r
	})
}

// withoutOutsideHrefs empties the xlink:href attributes of an OpenDocument part
// that leave the package, except on hyperlinks.
func withoutOutsideHrefs(b []byte) []byte {
	if !bytes.Contains(b, []byte("href")) {
		return b
	}
	return startTag.ReplaceAllFunc(b, func(tag []byte) []byte {
		name := string(startTag.FindSubmatch(tag)[1])
		if name == "text:a" || name == "draw:a" {
			return tag
		}
		return emptyHrefs(tag, func(ref string) bool { return !leavesPackage(ref) })
	})
}

// sanitizeSVG takes out of an SVG image what can load something else.
func sanitizeSVG(b []byte) []byte {
	b = doctype.ReplaceAll(b, nil)
	b = stylePI.ReplaceAll(b, nil)
	b = emptyHrefs(b, func(ref string) bool { return strings.HasPrefix(ref, "#") || rasterDataURI(ref) })
	return []byte(cleanCSS(string(b)))
}

// emptyHrefs empties the href attributes (of any namespace) in b whose
// value, XML entities decoded, keep does not accept.
func emptyHrefs(b []byte, keep func(ref string) bool) []byte {
	return hrefAttr.ReplaceAllFunc(b, func(a []byte) []byte {
		m := hrefAttr.FindSubmatch(a)
		if keep(strings.TrimSpace(html.UnescapeString(string(m[2]) + string(m[3])))) {
			return a
		}
		return append(append([]byte(nil), m[1]...), `""`...)
	})
}

// leavesPackage reports whether an ODT reference points outside its
// package: a URL with a scheme, an absolute path, or a path through "..".
// Inside references are relative ("Pictures/x.png", "./Object 1").
func leavesPackage(ref string) bool {
	if ref == "" || strings.HasPrefix(ref, "#") {
		return false
	}
	ref = strings.ReplaceAll(ref, `\`, "/")
	if strings.HasPrefix(ref, "/") || strings.Contains(ref, ":") {
		return true
	}
	for _, seg := range strings.Split(ref, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}
