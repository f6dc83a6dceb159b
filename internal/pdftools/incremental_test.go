package pdftools

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

func TestMetadataSetAgreesInInfoAndXMP(t *testing.T) {
	res := do(t, Request{Op: OpMetadata, Files: one("in.pdf", pdftest.Generated(2, true, 0)),
		Set: map[string]string{"title": "Quarterly report Ω", "author": "Ada <Lovelace>", "keywords": "a, b"}})
	qpdfClean(t, res.Data)
	info := tool(t, res.Data, "pdfinfo")
	for _, want := range []string{"Title:           Quarterly report Ω", "Author:          Ada <Lovelace>", "Keywords:        a, b"} {
		if !strings.Contains(info, want) {
			t.Errorf("pdfinfo lacks %q:\n%s", want, info)
		}
	}
	xmp := tool(t, res.Data, "pdfinfo", "-meta")
	for _, want := range []string{"Quarterly report Ω", "Ada &lt;Lovelace&gt;", "<pdf:Keywords>a, b</pdf:Keywords>", "<xmp:ModifyDate>"} {
		if !strings.Contains(xmp, want) {
			t.Errorf("XMP lacks %q:\n%s", want, xmp)
		}
	}
	out := do(t, Request{Op: OpMetadata, Files: one("out.pdf", res.Data)})
	var m Metadata
	if err := json.Unmarshal(out.Data, &m); err != nil || out.ContentType != TypeJSON {
		t.Fatalf("metadata JSON: %v (%s)", err, out.ContentType)
	}
	if m.Properties["title"] != "Quarterly report Ω" || m.Properties["author"] != "Ada <Lovelace>" || m.Pages != 2 || m.Signed || m.ModDate == "" {
		t.Errorf("metadata read back: %+v", m)
	}
}

func TestIncrementalOperationsKeepSignatures(t *testing.T) {
	in := signed(t, 2)
	signaturesValid(t, in, 1)
	for _, req := range []Request{
		{Op: OpMetadata, Set: map[string]string{"title": "Signed and titled"}},
		{Op: OpWatermark, Text: "COPY", Opacity: 0.3, Angle: 45},
		{Op: OpAttach, Files: []File{{Name: "notes.txt", Data: []byte("attached notes")}}},
	} {
		req.Files = append(one("signed.pdf", in), req.Files...)
		res := do(t, req)
		if !bytes.HasPrefix(res.Data, in) {
			t.Errorf("%s: not an incremental update of the signed file", req.Op)
		}
		qpdfClean(t, res.Data)
		signaturesValid(t, res.Data, 1)
	}
}

func TestWatermarkOfSignedPDFIsAnAnnotation(t *testing.T) {
	res := do(t, Request{Op: OpWatermark, Files: one("signed.pdf", signed(t, 2)), Text: "CONFIDENTIAL", Pages: "2"})
	if text := textOf(t, res.Data, 1); strings.Contains(text, "CONFIDENTIAL") {
		t.Errorf("page 1 was not chosen but shows the watermark: %q", text)
	}
	// poppler draws annotations' appearances: the text is on page 2's image.
	blank := renderPNG(t, signed(t, 2), 2)
	marked := renderPNG(t, res.Data, 2)
	if bytes.Equal(blank, marked) {
		t.Error("page 2 renders as before: the watermark's appearance is not drawn")
	}
}

func renderPNG(t *testing.T, b []byte, page int) []byte {
	t.Helper()
	return do(t, Request{Op: OpRender, Files: one("in.pdf", b), Page: page, DPI: 36}).Data
}

func TestWatermarkRewritesUnsignedPages(t *testing.T) {
	for _, stamp := range []bool{false, true} {
		res := do(t, Request{Op: OpWatermark, Files: one("in.pdf", pdftest.OnePage("Body text")), Text: "DRAFT", Stamp: stamp})
		qpdfClean(t, res.Data)
		text := textOf(t, res.Data, 1)
		if !strings.Contains(text, "DRAFT") || !strings.Contains(text, "Body text") {
			t.Errorf("stamp=%v: page text %q lacks the watermark or the body", stamp, text)
		}
	}
}

// TestWatermarkInEveryScript: a watermark in Arabic, Chinese, Japanese,
// Korean, Hindi and emoji is drawn with the certificate page's fonts,
// shaped, and extractable as the text sent (pdftotext), on a signed PDF
// (as an annotation) as on an unsigned one; a character no font has is a
// 400 naming it.
func TestWatermarkInEveryScript(t *testing.T) {
	for _, text := range []string{"مسودة سرية", "机密草稿", "下書き", "비밀", "गोपनीय", "Draft ✅🔒"} {
		for name, in := range map[string][]byte{"unsigned": pdftest.OnePage("Body"), "signed": signed(t, 1)} {
			res := do(t, Request{Op: OpWatermark, Files: one("in.pdf", in), Text: text})
			qpdfClean(t, res.Data)
			got := textOf(t, res.Data, 1)
			if name == "signed" { // an annotation's appearance: poppler draws it, pdftotext does not read it
				if bytes.Equal(renderPNG(t, in, 1), renderPNG(t, res.Data, 1)) {
					t.Errorf("%s watermark %q: the page renders as before", name, text)
				}
				continue
			}
			if !strings.Contains(strings.Join(strings.Fields(got), " "), text) {
				t.Errorf("%s watermark %q: the page reads %q", name, text, got)
			}
		}
	}
	got, err := code(t, Request{Op: OpWatermark, Files: one("in.pdf", pdftest.OnePage("x")), Text: "draft \U000F0001"})
	if got != quire.CodeValidation || !strings.Contains(err.Error(), "U+F0001") {
		t.Errorf("a character no font has: %q %v, want %s naming U+F0001", got, err, quire.CodeValidation)
	}
}

func TestRewritingOperationsRefuseSignedPDFs(t *testing.T) {
	in := signed(t, 2)
	for _, req := range []Request{
		{Op: OpMerge, Files: []File{{"signed.pdf", in}, {"other.pdf", pdftest.OnePage("x")}}},
		{Op: OpSplit, Every: 1}, {Op: OpRotate, Angle: 90}, {Op: OpEncrypt, UserPassword: "pw"},
		{Op: OpWatermark, Files: []File{{"stamp.png", renderPNG(t, pdftest.OnePage("x"), 1)}}},
	} {
		if req.Op != OpMerge {
			req.Files = append(one("signed.pdf", in), req.Files...)
		}
		got, err := code(t, req)
		if got != quire.CodeUnprocessable || !strings.Contains(err.Error(), "signed") || !strings.Contains(err.Error(), "force=true") {
			t.Errorf("%s of a signed PDF: %v, want 422 naming the signature and force=true", req.Op, err)
		}
		req.Force = true
		if _, err := code(t, req); err != nil {
			t.Errorf("%s with force=true: %v", req.Op, err)
		}
	}
}

func TestAttach(t *testing.T) {
	in := do(t, Request{Op: OpAttach, Files: []File{{"in.pdf", pdftest.OnePage("x")}, {"data.csv", []byte("a,b\n1,2\n")}}}).Data
	res := do(t, Request{Op: OpAttach, Files: []File{{"in.pdf", in}, {"dir/data.csv", []byte("second")}, {"readme.txt", []byte("hello")}}})
	qpdfClean(t, res.Data)
	list := tool(t, res.Data, "pdfdetach", "-list")
	for _, want := range []string{"3 embedded files", "data.csv", "data (2).csv", "readme.txt"} {
		if !strings.Contains(list, want) {
			t.Errorf("pdfdetach -list lacks %q:\n%s", want, list)
		}
	}
	dir := t.TempDir()
	runOut(t, "pdfdetach", "-saveall", "-o", dir, pdftest.WriteTemp(t, res.Data))
	for name, want := range map[string]string{"data.csv": "a,b\n1,2\n", "data (2).csv": "second", "readme.txt": "hello"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s extracted as %q, want %q", name, got, want)
		}
	}
}

// TestHostileInputsAreRefused passes the pathological PDFs of the
// reader's suite through every operation: each ends in a client error
// (never a 5xx), the unrepairable ones in a refusal, within the memory
// bound of signing.
func TestHostileInputsAreRefused(t *testing.T) {
	if _, err := testFonts.Renderer(); err != nil { // loaded once per server, not per request
		t.Fatal(err)
	}
	for _, h := range pdftest.HostileFiles() {
		for _, op := range Operations {
			req := Request{Op: op, Files: one(h.Name+".pdf", h.PDF), Ranges: "1", Angle: 90, UserPassword: "x", Text: "x", Page: 1, DPI: 10}
			switch op {
			case OpMerge:
				req.Files = append(req.Files, File{"b.pdf", pdftest.OnePage("x")})
			case OpAttach:
				req.Files = append(req.Files, File{"a.txt", []byte("x")})
			}
			refusedWithinBound(t, h, req)
		}
	}
}

func TestMetadataReadsVersionTagsFormAndLinearization(t *testing.T) {
	plain := pdftest.Generated(2, false, 0)
	doc, err := pdf.Open(context.Background(), plain, pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	catRef, cat, err := doc.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	cat = cat.Clone()
	cat["Version"] = pdf.Name("2.0")
	cat["MarkInfo"] = pdf.Dict{"Marked": pdf.Bool(true)}
	cat["AcroForm"] = pdf.Dict{"Fields": pdf.Array{doc.Add(pdf.Dict{"FT": pdf.Name("Tx"), "T": pdf.String("name")})}}
	doc.Replace(catRef, cat)
	traits, err := doc.Save()
	if err != nil {
		t.Fatal(err)
	}
	pdftest.RequireTool(t, "qpdf", "qpdf")
	lin := filepath.Join(t.TempDir(), "lin.pdf")
	runOut(t, "qpdf", "--linearize", pdftest.WriteTemp(t, plain), lin)
	linBytes, err := os.ReadFile(lin)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		in   []byte
		want Metadata
	}{
		{"plain", plain, Metadata{Version: "1.7"}},
		{"tagged form 2.0", traits, Metadata{Version: "2.0", Tagged: true, FormFields: true}},
		{"linearized", linBytes, Metadata{Version: "1.7", Linearized: true}},
	} {
		var m Metadata
		if err := json.Unmarshal(do(t, Request{Op: OpMetadata, Files: one("in.pdf", c.in)}).Data, &m); err != nil {
			t.Fatal(err)
		}
		if m.Version != c.want.Version || m.Tagged != c.want.Tagged || m.FormFields != c.want.FormFields || m.Linearized != c.want.Linearized {
			t.Errorf("%s: version %s, tagged %t, form fields %t, linearized %t; want %s, %t, %t, %t", c.name,
				m.Version, m.Tagged, m.FormFields, m.Linearized, c.want.Version, c.want.Tagged, c.want.FormFields, c.want.Linearized)
		}
	}
}
