package pdftools

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/libreoffice/pdfatest"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// invoice is a Factur-X (CII) invoice of the given guideline.
func invoice(guideline string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100">
<rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>` + guideline + `</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext>
<rsm:ExchangedDocument><ram:ID>INV-1</ram:ID><ram:TypeCode>380</ram:TypeCode></rsm:ExchangedDocument>
</rsm:CrossIndustryInvoice>`)
}

// pdfaInput is the corpus's PDF/A-1b file.
func pdfaInput(t *testing.T) []byte {
	t.Helper()
	for _, p := range corpus(t) {
		if filepath.Base(p) == "pypdf-samples__crazyones-pdfa.pdf" {
			return read(t, p)
		}
	}
	t.Fatal("the corpus lacks pypdf-samples__crazyones-pdfa.pdf")
	return nil
}

func TestFacturX(t *testing.T) {
	in := pdfaInput(t)
	for _, c := range []struct{ guideline, level, relationship string }{
		{"urn:cen.eu:en16931:2017", "EN 16931", "Alternative"},
		{"urn:factur-x.eu:1p0:minimum", "MINIMUM", "Data"},
	} {
		res := do(t, Request{Op: OpAttach, FacturX: true, Files: []File{{"invoice.pdf", in}, {"factur-x.xml", invoice(c.guideline)}}})
		qpdfClean(t, res.Data)
		pdfatest.Check(t, res.Data, 3)
		if list := tool(t, res.Data, "pdfdetach", "-list"); !strings.Contains(list, "1: factur-x.xml") {
			t.Errorf("pdfdetach -list:\n%s", list)
		}
		xmp := tool(t, res.Data, "pdfinfo", "-meta")
		for _, want := range []string{"<fx:ConformanceLevel>" + c.level + "</fx:ConformanceLevel>", "<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>",
			"<fx:DocumentType>INVOICE</fx:DocumentType>", "<pdfaSchema:prefix>fx</pdfaSchema:prefix>"} {
			if !strings.Contains(xmp, want) {
				t.Errorf("%s: XMP lacks %s", c.level, want)
			}
		}
		d, err := pdf.Open(context.Background(), res.Data, pdf.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		_, cat, _ := d.Catalog()
		af, err := d.Array(cat["AF"])
		if err != nil || len(af) != 1 {
			t.Fatalf("%s: catalog /AF is %v (%v)", c.level, cat["AF"], err)
		}
		spec, _ := d.Dict(af[0])
		if spec["AFRelationship"] != pdf.Name(c.relationship) {
			t.Errorf("%s: AFRelationship %v, want %s", c.level, spec["AFRelationship"], c.relationship)
		}
	}
}

func TestFacturXRefusals(t *testing.T) {
	got, err := code(t, Request{Op: OpAttach, FacturX: true, Files: []File{{"in.pdf", pdftest.OnePage("x")}, {"factur-x.xml", invoice("urn:cen.eu:en16931:2017")}}})
	if got != quire.CodeUnprocessable || !strings.Contains(err.Error(), "pdfa=PDF/A-3b") {
		t.Errorf("a PDF that is not PDF/A: %v", err)
	}
	for name, xml := range map[string][]byte{"not XML": []byte("{}"), "not CII": []byte("<Invoice/>"), "unknown profile": invoice("urn:example"),
		"a DTD": []byte(`<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><rsm:CrossIndustryInvoice/>`)} {
		if got, err := code(t, Request{Op: OpAttach, FacturX: true, Files: []File{{"in.pdf", pdfaInput(t)}, {"factur-x.xml", xml}}}); got != quire.CodeValidation {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got, _ := code(t, Request{Op: OpAttach, FacturX: true, Files: []File{{"in.pdf", pdfaInput(t)}, {"invoice.xml", invoice("urn:cen.eu:en16931:2017")}}}); got != quire.CodeValidation {
		t.Errorf("facturx without a factur-x.xml part: %q", got)
	}
}
