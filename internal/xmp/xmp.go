// Package xmp writes a PDF's XMP metadata packet (ISO 16684-1) from its
// document information dictionary, so that the two agree, as PDF/A
// requires (ISO 19005-1 6.7.3): the Info entries, their XMP properties,
// and the PDF/A and PDF/UA identification.
//
// Written by hand: a packet of a dozen known properties needs no general
// XMP library, and none that Go has is kept up.
package xmp

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"

	"github.com/quire-dev/quire/internal/pdf"
)

// Claims are what the packet says the file conforms to.
type Claims struct {
	// PDFAPart and PDFAConformance identify PDF/A ("2", "B"); "" for none.
	PDFAPart, PDFAConformance string
	// UAPart identifies PDF/UA (1); 0 for none. With PDF/A, the packet
	// also describes the pdfuaid schema in a PDF/A extension schema, as
	// PDF/A requires of any schema it does not predefine.
	UAPart int
	// Extra are further rdf:Description elements, written as they are (an
	// extension's properties and its schema description).
	Extra string
}

// Packet returns the XMP packet of info with the claims c.
func Packet(info pdf.Dict, c Claims) []byte {
	text := func(key pdf.Name) string { return pdf.TextOf(info[key]) }
	var b strings.Builder
	b.WriteString("<?xpacket begin=\"\ufeff\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">\n<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n")
	desc := func(ns string) { fmt.Fprintf(&b, "<rdf:Description rdf:about=\"\" %s>\n", ns) }
	end := func() { b.WriteString("</rdf:Description>\n") }

	desc(`xmlns:dc="http://purl.org/dc/elements/1.1/"`)
	b.WriteString("<dc:format>application/pdf</dc:format>\n")
	if v := text("Title"); v != "" {
		fmt.Fprintf(&b, "<dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">%s</rdf:li></rdf:Alt></dc:title>\n", Escape(v))
	}
	if v := text("Author"); v != "" {
		fmt.Fprintf(&b, "<dc:creator><rdf:Seq><rdf:li>%s</rdf:li></rdf:Seq></dc:creator>\n", Escape(v))
	}
	if v := text("Subject"); v != "" {
		fmt.Fprintf(&b, "<dc:description><rdf:Alt><rdf:li xml:lang=\"x-default\">%s</rdf:li></rdf:Alt></dc:description>\n", Escape(v))
	}
	end()
	desc(`xmlns:pdf="http://ns.adobe.com/pdf/1.3/"`)
	if v := text("Keywords"); v != "" {
		fmt.Fprintf(&b, "<pdf:Keywords>%s</pdf:Keywords>\n", Escape(v))
	}
	if v := text("Producer"); v != "" {
		fmt.Fprintf(&b, "<pdf:Producer>%s</pdf:Producer>\n", Escape(v))
	}
	end()
	desc(`xmlns:xmp="http://ns.adobe.com/xap/1.0/"`)
	if v := text("Creator"); v != "" {
		fmt.Fprintf(&b, "<xmp:CreatorTool>%s</xmp:CreatorTool>\n", Escape(v))
	}
	if v := Date(text("CreationDate")); v != "" {
		fmt.Fprintf(&b, "<xmp:CreateDate>%s</xmp:CreateDate>\n", v)
	}
	if v := Date(text("ModDate")); v != "" {
		fmt.Fprintf(&b, "<xmp:ModifyDate>%s</xmp:ModifyDate>\n<xmp:MetadataDate>%s</xmp:MetadataDate>\n", v, v)
	}
	end()
	if c.PDFAPart != "" {
		desc(`xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"`)
		fmt.Fprintf(&b, "<pdfaid:part>%s</pdfaid:part>\n<pdfaid:conformance>%s</pdfaid:conformance>\n", Escape(c.PDFAPart), Escape(c.PDFAConformance))
		end()
	}
	if c.UAPart != 0 {
		desc(`xmlns:pdfuaid="http://www.aiim.org/pdfua/ns/id/"`)
		fmt.Fprintf(&b, "<pdfuaid:part>%d</pdfuaid:part>\n", c.UAPart)
		end()
		if c.PDFAPart != "" {
			b.WriteString(uaExtension)
		}
	}
	b.WriteString(c.Extra)
	b.WriteString("</rdf:RDF>\n</x:xmpmeta>\n")
	b.WriteString(strings.Repeat(strings.Repeat(" ", 99)+"\n", 20)) // room to edit in place, as XMP asks
	b.WriteString("<?xpacket end=\"w\"?>")
	return []byte(b.String())
}

// uaExtension describes the pdfuaid schema for PDF/A (ISO 19005-1 6.7.8).
const uaExtension = `<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">
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
</rdf:Description>
`

// Escape escapes s for XML text.
func Escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

// pdfDate reads a PDF date: D:YYYY[MM[DD[HH[mm[SS]]]]][Z|+HH'mm'|-HH'mm'].
var pdfDate = regexp.MustCompile(`^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(Z|[+-]\d{2}'?\d{2}'?)?`)

// Date converts a PDF date to XMP's (ISO 8601); "" when it is not one.
func Date(s string) string {
	m := pdfDate.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	out := fmt.Sprintf("%s-%s-%sT%s:%s:%s", m[1], or(m[2], "01"), or(m[3], "01"), or(m[4], "00"), or(m[5], "00"), or(m[6], "00"))
	switch tz := strings.ReplaceAll(m[7], "'", ""); {
	case tz == "" || tz == "Z":
		return out + "Z"
	default:
		return out + tz[:3] + ":" + tz[3:]
	}
}
