package httpapi_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/libreoffice/pdfatest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestConvertOptions: the query's options reach the engine (a PDF/A-2b
// and a tagged PDF from Markdown made into DOCX), and unknown options or
// bad values are refused with a detail each, before any conversion.
func TestConvertOptions(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion())
	key := e.key("options@example.com")
	docx := e.convert(key, "from=md&to=docx", "c.md", []byte("# Options\n\nSome text.\n"))
	if docx.status != 200 {
		t.Fatalf("making a DOCX: %d %s", docx.status, docx.body)
	}
	r := e.convert(key, "from=docx&pdfa=PDF/A-2b", "c.docx", docx.body)
	if r.status != 200 {
		t.Fatalf("pdfa=PDF/A-2b: %d %s", r.status, r.body)
	}
	pdfatest.Check(t, r.body, 2)
	r = e.convert(key, "from=docx&pdfua=true&pageRanges=1&exportFormFields=false&quality=80&reduceImageResolution=true&maxImageResolution=150", "c.docx", docx.body)
	if r.status != 200 {
		t.Fatalf("pdfua and the others: %d %s", r.status, r.body)
	}
	pdfatest.CheckTagged(t, r.body)

	for query, want := range map[string]map[string]string{
		"from=docx&pdfa=PDF/A-2u&quality=abc&pdfua=yes": {"pdfa": "PDF/A-1b, PDF/A-2b, PDF/A-3b", "quality": "whole number", "pdfua": "true or false"},
		"from=docx&pageRange=1":                         {"pageRange": "did you mean pageRanges?"},
		"from=docx&pdfua.decorativeImages=true":         {"pdfua.decorativeImages": "only with pdfua=true"},
		"from=docx&PDFA=PDF/A-1b&bogus=1":               {"PDFA": "did you mean pdfa?", "bogus": "not a known query parameter"},
		"from=docx&landscape=true":                      {"landscape": "html and md only"},
		"landscape=true":                                {"landscape": "html and md only"}, // the format told by the file, validated once with it
		"from=docx&pageRanges=3-1":                      {"pageRanges": "ends before it starts"},
		"from=docx&pageRanges=1&pageRanges=2":           {"pageRanges": "more than once"},
		"from=docx&maxImageResolution=150":              {"maxImageResolution": "reduceImageResolution=true"},
		"from=md&to=docx&pdfa=PDF/A-1b":                 {"to": "need to=pdf"},
		"from=html&password=x":                          {"password": "docx, doc, odt documents only"},
		"from=pages&pdfa=PDF/A-9":                       {"from": "must be one of", "pdfa": "must be one of"},
	} {
		b := e.convert(key, query, "c.docx", docx.body).errorBody(t, 400, "VALIDATION_ERROR")
		got := map[string]string{}
		for _, d := range b.Details {
			got[d.Field] = d.Issue
		}
		if len(got) != len(want) {
			t.Errorf("%s: details %+v, want fields %v", query, b.Details, want)
		}
		for field, issue := range want {
			if !strings.Contains(got[field], issue) {
				t.Errorf("%s: %s: %q, want %q", query, field, got[field], issue)
			}
		}
	}
}

// TestSignedPDFA: ?pdfa=PDF/A-2b on /v1/sign makes a DOCX a signed
// PDF/A-2b in one call, certificate pages included, and the signature
// keeps the conformance the conversion gave (checked after signing).
// pdfa on a PDF, a bad value and an unknown parameter are refused.
func TestSignedPDFA(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion())
	key := e.key("archive@example.com")
	docx := e.convert(key, "from=md&to=docx", "c.md", []byte("# Contract\n\nThe parties agree.\n"))
	if docx.status != 200 {
		t.Fatalf("making a DOCX: %d %s", docx.status, docx.body)
	}
	for _, certificate := range []bool{false, true} {
		body := strings.Replace(signBody(inline(docx.body)), `"enabled":false`, `"enabled":`+strconv.FormatBool(certificate), 1)
		signed := signedPDF(t, e.do("POST", "/v1/sign?pdfa=PDF/A-2b", strings.NewReader(body),
			map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}))
		if got := tool(t, "poppler-utils", "pdfsig", pdftest.WriteTemp(t, signed)); !strings.Contains(got, "Signature is Valid.") {
			t.Errorf("certificate %v: pdfsig:\n%s", certificate, got)
		}
		t.Run("certificate="+strconv.FormatBool(certificate), func(t *testing.T) { pdfatest.Check(t, signed, 2) })
	}
	for query, c := range map[string]struct{ document, field, issue string }{
		"pdfa=PDF/A-2b":     {inline(pdftest.OnePage("already a PDF")), "pdfa", "is a PDF already"},
		"pdfa=PDF/A-4":      {inline(docx.body), "pdfa", "must be one of"},
		"pdfa=PDF/A-2b&x=1": {inline(docx.body), "x", "not a known query parameter"},
	} {
		b := e.do("POST", "/v1/sign?"+query, strings.NewReader(signBody(c.document)),
			map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}).errorBody(t, 400, "VALIDATION_ERROR")
		if len(b.Details) != 1 || b.Details[0].Field != c.field || !strings.Contains(b.Details[0].Issue, c.issue) {
			t.Errorf("%s: details %+v, want %s: %s", query, b.Details, c.field, c.issue)
		}
	}
}
