package pdftools

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
)

// The document's XMP metadata is written anew from the information
// dictionary, so that the two agree (PDF/A requires it): the properties
// of MetadataKeys and the dates, plus the PDF/A identification of the
// file's former XMP, and for a Factur-X invoice its extension schema.
// Other XMP properties of the former packet are not carried over.

// xmpOf returns the XMP metadata of the catalog, "" without one.
func xmpOf(d *pdf.Document, cat pdf.Dict) string {
	o, err := d.Resolve(cat["Metadata"])
	if err != nil {
		return ""
	}
	st, ok := o.(*pdf.Stream)
	if !ok {
		return ""
	}
	b, err := d.Decode(st)
	if err != nil {
		return ""
	}
	return string(b)
}

// xmpValue reads a simple property of an XMP packet, as an attribute or
// as an element.
func xmpValue(xmp, name string) string {
	q := regexp.QuoteMeta(name)
	if m := regexp.MustCompile(q + `\s*=\s*["']([^"']*)["']`).FindStringSubmatch(xmp); m != nil {
		return m[1]
	}
	if m := regexp.MustCompile(`<` + q + `>([^<]*)</` + q + `>`).FindStringSubmatch(xmp); m != nil {
		return m[1]
	}
	return ""
}

// pdfaID is the PDF/A identification of an XMP packet: part and
// conformance, empty when it claims none.
type pdfaID struct{ part, conformance string }

func pdfaOf(xmp string) pdfaID {
	return pdfaID{xmpValue(xmp, "pdfaid:part"), strings.ToUpper(xmpValue(xmp, "pdfaid:conformance"))}
}

// facturX describes the invoice of a Factur-X document for its XMP.
type facturX struct {
	level string // the Factur-X conformance level: MINIMUM, BASIC WL, BASIC, EN 16931, EXTENDED
}

// xmpPacket writes the XMP metadata of info, with the PDF/A
// identification id and, for an invoice, the Factur-X extension.
func xmpPacket(info pdf.Dict, id pdfaID, fx *facturX) []byte {
	text := func(key pdf.Name) string {
		switch v := info[key].(type) {
		case pdf.String:
			return pdf.DecodeText(v)
		case pdf.HexString:
			return pdf.DecodeText(v)
		}
		return ""
	}
	var b strings.Builder
	b.WriteString("<?xpacket begin=\"\ufeff\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">\n<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n")
	desc := func(ns string) { fmt.Fprintf(&b, "<rdf:Description rdf:about=\"\" %s>\n", ns) }
	end := func() { b.WriteString("</rdf:Description>\n") }

	desc(`xmlns:dc="http://purl.org/dc/elements/1.1/"`)
	b.WriteString("<dc:format>application/pdf</dc:format>\n")
	if v := text("Title"); v != "" {
		fmt.Fprintf(&b, "<dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">%s</rdf:li></rdf:Alt></dc:title>\n", esc(v))
	}
	if v := text("Author"); v != "" {
		fmt.Fprintf(&b, "<dc:creator><rdf:Seq><rdf:li>%s</rdf:li></rdf:Seq></dc:creator>\n", esc(v))
	}
	if v := text("Subject"); v != "" {
		fmt.Fprintf(&b, "<dc:description><rdf:Alt><rdf:li xml:lang=\"x-default\">%s</rdf:li></rdf:Alt></dc:description>\n", esc(v))
	}
	end()
	desc(`xmlns:pdf="http://ns.adobe.com/pdf/1.3/"`)
	if v := text("Keywords"); v != "" {
		fmt.Fprintf(&b, "<pdf:Keywords>%s</pdf:Keywords>\n", esc(v))
	}
	if v := text("Producer"); v != "" {
		fmt.Fprintf(&b, "<pdf:Producer>%s</pdf:Producer>\n", esc(v))
	}
	end()
	desc(`xmlns:xmp="http://ns.adobe.com/xap/1.0/"`)
	if v := text("Creator"); v != "" {
		fmt.Fprintf(&b, "<xmp:CreatorTool>%s</xmp:CreatorTool>\n", esc(v))
	}
	if v := xmpDate(text("CreationDate")); v != "" {
		fmt.Fprintf(&b, "<xmp:CreateDate>%s</xmp:CreateDate>\n", v)
	}
	if v := xmpDate(text("ModDate")); v != "" {
		fmt.Fprintf(&b, "<xmp:ModifyDate>%s</xmp:ModifyDate>\n<xmp:MetadataDate>%s</xmp:MetadataDate>\n", v, v)
	}
	end()
	if id.part != "" {
		desc(`xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"`)
		fmt.Fprintf(&b, "<pdfaid:part>%s</pdfaid:part>\n<pdfaid:conformance>%s</pdfaid:conformance>\n", esc(id.part), esc(id.conformance))
		end()
	}
	if fx != nil {
		writeFacturX(&b, fx)
	}
	b.WriteString("</rdf:RDF>\n</x:xmpmeta>\n")
	b.WriteString(strings.Repeat(strings.Repeat(" ", 99)+"\n", 20)) // room to edit in place, as XMP asks
	b.WriteString("<?xpacket end=\"w\"?>")
	return []byte(b.String())
}

// writeFacturX writes the Factur-X properties and their PDF/A extension
// schema description (Factur-X 1.0, section 7.1 of its specification).
func writeFacturX(b *strings.Builder, fx *facturX) {
	const ns = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#"
	fmt.Fprintf(b, "<rdf:Description rdf:about=\"\" xmlns:fx=\"%s\">\n", ns)
	fmt.Fprintf(b, "<fx:DocumentType>INVOICE</fx:DocumentType>\n<fx:DocumentFileName>%s</fx:DocumentFileName>\n<fx:Version>1.0</fx:Version>\n<fx:ConformanceLevel>%s</fx:ConformanceLevel>\n", FacturXName, esc(fx.level))
	b.WriteString("</rdf:Description>\n")
	b.WriteString(`<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">
<pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
<pdfaSchema:namespaceURI>` + ns + `</pdfaSchema:namespaceURI>
<pdfaSchema:prefix>fx</pdfaSchema:prefix>
<pdfaSchema:property><rdf:Seq>
`)
	for _, p := range [][2]string{
		{"DocumentFileName", "The name of the embedded XML document"},
		{"DocumentType", "The type of the hybrid document in capital letters, e.g. INVOICE or ORDER"},
		{"Version", "The actual version of the standard applying to the embedded XML document"},
		{"ConformanceLevel", "The conformance level of the embedded XML document"},
	} {
		fmt.Fprintf(b, "<rdf:li rdf:parseType=\"Resource\"><pdfaProperty:name>%s</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>%s</pdfaProperty:description></rdf:li>\n", p[0], p[1])
	}
	b.WriteString("</rdf:Seq></pdfaSchema:property>\n</rdf:li></rdf:Bag></pdfaExtension:schemas>\n</rdf:Description>\n")
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// pdfDate is t as a PDF date string.
func pdfDate(t time.Time) string { return t.UTC().Format("D:20060102150405Z") }

// pdfDateRE reads a PDF date: D:YYYY[MM[DD[HH[mm[SS]]]]][Z|+HH'mm'|-HH'mm'].
var pdfDateRE = regexp.MustCompile(`^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(Z|[+-]\d{2}'?\d{2}'?)?`)

// xmpDate converts a PDF date to XMP's (ISO 8601); "" when it is not one.
func xmpDate(s string) string {
	m := pdfDateRE.FindStringSubmatch(s)
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
