package xmp

import (
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
)

// TestDate: PDF dates in XMP's form, with their offsets; a string that
// is no date gives "".
func TestDate(t *testing.T) {
	for in, want := range map[string]string{
		"D:20261129101530+01'00'": "2026-11-29T10:15:30+01:00",
		"D:20261129101530Z":       "2026-11-29T10:15:30Z",
		"D:2026":                  "2026-01-01T00:00:00Z",
		"yesterday":               "",
	} {
		if got := Date(in); got != want {
			t.Errorf("Date(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPacket: the Info entries escaped, and the claims; the PDF/UA
// schema is described for PDF/A only when both are claimed.
func TestPacket(t *testing.T) {
	info := pdf.Dict{"Title": pdf.TextString("a < b"), "CreationDate": pdf.String("D:20260101000000Z")}
	both := string(Packet(info, Claims{PDFAPart: "1", PDFAConformance: "B", UAPart: 1}))
	for _, want := range []string{"a &lt; b", "<xmp:CreateDate>2026-01-01T00:00:00Z<", "<pdfaid:part>1<", "<pdfuaid:part>1<", "<pdfaSchema:prefix>pdfuaid<"} {
		if !strings.Contains(both, want) {
			t.Errorf("packet lacks %s:\n%s", want, both)
		}
	}
	if ua := string(Packet(info, Claims{UAPart: 1})); strings.Contains(ua, "pdfaExtension") || strings.Contains(ua, "pdfaid") {
		t.Errorf("a PDF/UA-only packet describes PDF/A:\n%s", ua)
	}
}
