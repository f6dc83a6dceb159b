package conform

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
)

// metadata is what the Info dictionary and the XMP packet both say: one
// set of values written twice, which is how PDF/A's rule that they agree
// (ISO 19005-1 6.7.3) holds by construction.
type metadata struct {
	title, author, subject, keywords, creator, producer string
	created, modified                                   time.Time
	pdfa                                                int
	ua                                                  bool
}

func newMetadata(d *pdf.Document, cat pdf.Dict, o Options) metadata {
	_, info := d.Info()
	text := func(key pdf.Name) string {
		o, err := d.Resolve(info[key])
		if err != nil {
			return ""
		}
		switch s := o.(type) {
		case pdf.String:
			return strings.TrimSpace(pdf.DecodeText(s))
		case pdf.HexString:
			return strings.TrimSpace(pdf.DecodeText(s))
		}
		return ""
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	m := metadata{
		title: text("Title"), author: text("Author"), subject: text("Subject"), keywords: text("Keywords"),
		creator: text("Creator"), producer: text("Producer"), pdfa: o.PDFA, ua: o.UA,
	}
	m.created = parseDate(text("CreationDate"), now)
	m.modified = parseDate(text("ModDate"), m.created)
	if m.title == "" && o.UA {
		m.title = firstNonEmpty(firstOutlineTitle(d, cat), o.Title, "Untitled")
	}
	return m
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// firstOutlineTitle returns the title of the outline's first entry: both
// engines make the outline from the headings, so it is the first heading.
func firstOutlineTitle(d *pdf.Document, cat pdf.Dict) string {
	outlines, err := d.Dict(cat["Outlines"])
	if err != nil {
		return ""
	}
	first, err := d.Dict(outlines["First"])
	if err != nil {
		return ""
	}
	t, err := d.Resolve(first["Title"])
	if err != nil {
		return ""
	}
	switch s := t.(type) {
	case pdf.String:
		return pdf.DecodeText(s)
	case pdf.HexString:
		return pdf.DecodeText(s)
	}
	return ""
}

// pdfDate matches a PDF date (ISO 32000-1 7.9.4), from the year on; the
// parts after the year are optional.
var pdfDate = regexp.MustCompile(`^D?:?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:(Z)|([+-])(\d{2})'?(\d{2})?'?)?`)

// parseDate reads a PDF date, def when s is none.
func parseDate(s string, def time.Time) time.Time {
	p := pdfDate.FindStringSubmatch(s)
	if p == nil {
		return def
	}
	n := func(i, d int) int {
		if p[i] == "" {
			return d
		}
		v, _ := strconv.Atoi(p[i]) // digits only
		return v
	}
	loc := time.UTC
	if p[8] != "" {
		off := (n(9, 0)*60 + n(10, 0)) * 60
		if p[8] == "-" {
			off = -off
		}
		loc = time.FixedZone("", off)
	}
	t := time.Date(n(1, 0), time.Month(n(2, 1)), n(3, 1), n(4, 0), n(5, 0), n(6, 0), 0, loc)
	if t.Year() < 1000 || n(2, 1) > 12 || n(3, 1) > 31 { // 0000-00-00 and the like
		return def
	}
	return t
}

// pdfDateString writes t as a PDF date, with its offset.
func pdfDateString(t time.Time) string {
	_, off := t.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("D:%s%c%02d'%02d'", t.Format("20060102150405"), sign, off/3600, off/60%60)
}

// info returns the Info dictionary.
func (m metadata) info() pdf.Dict {
	d := pdf.Dict{
		"CreationDate": pdf.String(pdfDateString(m.created)),
		"ModDate":      pdf.String(pdfDateString(m.modified)),
	}
	for k, v := range map[pdf.Name]string{"Title": m.title, "Author": m.author, "Subject": m.subject,
		"Keywords": m.keywords, "Creator": m.creator, "Producer": m.producer} {
		if v != "" {
			d[k] = pdf.TextString(v)
		}
	}
	return d
}

// xmp returns the XMP packet (ISO 16684-1). It is written by hand: a
// packet of a dozen known properties needs no general XMP library, and
// none that Go has is kept up. A PDF/A file that also claims PDF/UA
// describes the pdfuaid schema in a PDF/A extension schema, as PDF/A
// requires of any schema it does not predefine.
func (m metadata) xmp() []byte {
	var b bytes.Buffer
	esc := func(s string) string {
		var e bytes.Buffer
		_ = xml.EscapeText(&e, []byte(s)) // a bytes.Buffer does not fail
		return e.String()
	}
	b.WriteString("<?xpacket begin=\"\ufeff\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n")
	b.WriteString(`<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` + "\n")
	desc := func(ns, body string) {
		if body != "" {
			fmt.Fprintf(&b, "<rdf:Description rdf:about=\"\" %s>\n%s</rdf:Description>\n", ns, body)
		}
	}
	var dc strings.Builder
	if m.title != "" {
		fmt.Fprintf(&dc, "<dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">%s</rdf:li></rdf:Alt></dc:title>\n", esc(m.title))
	}
	if m.author != "" {
		fmt.Fprintf(&dc, "<dc:creator><rdf:Seq><rdf:li>%s</rdf:li></rdf:Seq></dc:creator>\n", esc(m.author))
	}
	if m.subject != "" {
		fmt.Fprintf(&dc, "<dc:description><rdf:Alt><rdf:li xml:lang=\"x-default\">%s</rdf:li></rdf:Alt></dc:description>\n", esc(m.subject))
	}
	desc(`xmlns:dc="http://purl.org/dc/elements/1.1/"`, dc.String())
	xmpBody := fmt.Sprintf("<xmp:CreateDate>%s</xmp:CreateDate>\n<xmp:ModifyDate>%s</xmp:ModifyDate>\n<xmp:MetadataDate>%s</xmp:MetadataDate>\n",
		m.created.Format(time.RFC3339), m.modified.Format(time.RFC3339), m.modified.Format(time.RFC3339))
	if m.creator != "" {
		xmpBody += fmt.Sprintf("<xmp:CreatorTool>%s</xmp:CreatorTool>\n", esc(m.creator))
	}
	desc(`xmlns:xmp="http://ns.adobe.com/xap/1.0/"`, xmpBody)
	var pdfBody string
	if m.producer != "" {
		pdfBody += fmt.Sprintf("<pdf:Producer>%s</pdf:Producer>\n", esc(m.producer))
	}
	if m.keywords != "" {
		pdfBody += fmt.Sprintf("<pdf:Keywords>%s</pdf:Keywords>\n", esc(m.keywords))
	}
	desc(`xmlns:pdf="http://ns.adobe.com/pdf/1.3/"`, pdfBody)
	if m.pdfa != 0 {
		desc(`xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"`,
			fmt.Sprintf("<pdfaid:part>%d</pdfaid:part>\n<pdfaid:conformance>B</pdfaid:conformance>\n", m.pdfa))
	}
	if m.ua {
		desc(`xmlns:pdfuaid="http://www.aiim.org/pdfua/ns/id/"`, "<pdfuaid:part>1</pdfuaid:part>\n")
		if m.pdfa != 0 {
			desc(`xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#"`, uaExtension)
		}
	}
	b.WriteString("</rdf:RDF></x:xmpmeta>\n")
	// Padding lets a later editor rewrite the packet in place.
	b.WriteString(strings.Repeat(strings.Repeat(" ", 99)+"\n", 20))
	b.WriteString(`<?xpacket end="w"?>`)
	return b.Bytes()
}

// uaExtension describes the pdfuaid schema for PDF/A (ISO 19005-1 6.7.8).
const uaExtension = `<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">
<pdfaSchema:schema>PDF/UA identification schema</pdfaSchema:schema>
<pdfaSchema:namespaceURI>http://www.aiim.org/pdfua/ns/id/</pdfaSchema:namespaceURI>
<pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix>
<pdfaSchema:property><rdf:Seq><rdf:li rdf:parseType="Resource">
<pdfaProperty:name>part</pdfaProperty:name>
<pdfaProperty:valueType>Integer</pdfaProperty:valueType>
<pdfaProperty:category>internal</pdfaProperty:category>
<pdfaProperty:description>PDF/UA version identifier</pdfaProperty:description>
</rdf:li></rdf:Seq></pdfaSchema:property>
</rdf:li></rdf:Bag></pdfaExtension:schemas>
`
