package pdftools

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/xmp"
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
	c := xmp.Claims{PDFAPart: id.part, PDFAConformance: id.conformance}
	if fx != nil {
		c.Extra = facturXDescription(fx)
	}
	return xmp.Packet(info, c)
}

// facturXDescription returns the Factur-X properties and their PDF/A
// extension schema description (Factur-X 1.0, section 7.1 of its
// specification).
func facturXDescription(fx *facturX) string {
	var b strings.Builder
	const ns = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#"
	fmt.Fprintf(&b, "<rdf:Description rdf:about=\"\" xmlns:fx=\"%s\">\n", ns)
	fmt.Fprintf(&b, "<fx:DocumentType>INVOICE</fx:DocumentType>\n<fx:DocumentFileName>%s</fx:DocumentFileName>\n<fx:Version>1.0</fx:Version>\n<fx:ConformanceLevel>%s</fx:ConformanceLevel>\n", FacturXName, xmp.Escape(fx.level))
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
		fmt.Fprintf(&b, "<rdf:li rdf:parseType=\"Resource\"><pdfaProperty:name>%s</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>%s</pdfaProperty:description></rdf:li>\n", p[0], p[1])
	}
	b.WriteString("</rdf:Seq></pdfaSchema:property>\n</rdf:li></rdf:Bag></pdfaExtension:schemas>\n</rdf:Description>\n")
	return b.String()
}

// pdfDate is t as a PDF date string.
func pdfDate(t time.Time) string { return t.UTC().Format("D:20060102150405Z") }
