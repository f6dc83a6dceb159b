package conform

import (
	"bytes"
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
)

// TestParseDate: the dates engines write, and the ones that are no date
// (LibreOffice's 0000-00-00 for HTML), which take the default.
func TestParseDate(t *testing.T) {
	def := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	for in, want := range map[string]string{
		"D:20261129101530+01'00'": "2026-11-29T10:15:30+01:00",
		"D:20261129101530Z":       "2026-11-29T10:15:30Z",
		"D:20261129101530-05'30'": "2026-11-29T10:15:30-05:30",
		"D:2026":                  "2026-01-01T00:00:00Z",
		"D:00000000000000Z":       def.Format(time.RFC3339),
		"":                        def.Format(time.RFC3339),
		"yesterday":               def.Format(time.RFC3339),
	} {
		if got := parseDate(in, def).Format(time.RFC3339); got != want {
			t.Errorf("parseDate(%q) = %s, want %s", in, got, want)
		}
	}
	if got := pdfDateString(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", -(5*3600+1800)))); got != "D:20260102030405-05'30'" {
		t.Errorf("pdfDateString: %s", got)
	}
}

// TestApplyMetadata: Info and XMP carry the same dates and title, the
// title of last resort is used when the PDF has none, and the output
// extends the input.
func TestApplyMetadata(t *testing.T) {
	in, err := pdf.Write([]pdf.Page{{MediaBox: [4]float64{0, 0, 100, 100}, Content: []byte("0 0 10 10 re f")}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC)
	out, err := Apply(context.Background(), in, Options{PDFA: 2, UA: true, Title: "report <1> & co", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, in) {
		t.Fatal("the output does not extend the engine's PDF")
	}
	d, err := pdf.Read(out, pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, info := d.Info()
	if got := pdf.DecodeText(info["Title"].(pdf.String)); got != "report <1> & co" {
		t.Errorf("Info title %q", got)
	}
	if got := string(info["CreationDate"].(pdf.String)); got != "D:20261129093000+00'00'" {
		t.Errorf("Info CreationDate %s", got)
	}
	_, cat, _ := d.Catalog()
	meta, _ := d.Resolve(cat["Metadata"])
	xmp := meta.(*pdf.Stream).Data
	for _, want := range []string{`<xmp:CreateDate>2026-11-29T09:30:00+00:00</xmp:CreateDate>`, `report &lt;1&gt; &amp; co`,
		`<pdfaid:part>2</pdfaid:part>`, `<pdfuaid:part>1</pdfuaid:part>`, `pdfaSchema:prefix>pdfuaid<`} {
		if !bytes.Contains(xmp, []byte(want)) {
			t.Errorf("XMP lacks %s:\n%s", want, xmp)
		}
	}
	prefs, _ := d.Dict(cat["ViewerPreferences"])
	if prefs["DisplayDocTitle"] != pdf.Bool(true) {
		t.Error("no DisplayDocTitle")
	}
	if !hasOutputIntent(d, cat) {
		t.Error("no output intent")
	}
}

// TestSRGBProfile: the profile's header says what it is, and its size is
// its length.
func TestSRGBProfile(t *testing.T) {
	p := srgbProfile()
	if n := int(p[0])<<24 | int(p[1])<<16 | int(p[2])<<8 | int(p[3]); n != len(p) {
		t.Errorf("header size %d, profile %d bytes", n, len(p))
	}
	if !regexp.MustCompile(`^mntrRGB XYZ `).Match(p[12:24]) || string(p[36:40]) != "acsp" {
		t.Errorf("header %q", p[:40])
	}
}
