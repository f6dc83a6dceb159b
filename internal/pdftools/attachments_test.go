package pdftools

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/libreoffice/pdfatest"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// listAttachments answers attachments of doc, decoded.
func listAttachments(t *testing.T, doc []byte) []Attachment {
	t.Helper()
	res := do(t, Request{Op: OpAttachments, Files: one("a.pdf", doc)})
	var out []Attachment
	if err := json.Unmarshal(res.Data, &out); err != nil || res.ContentType != TypeJSON || out == nil {
		t.Fatalf("attachments: %v, %s %q", err, res.ContentType, res.Data)
	}
	return out
}

// embeddedData is the data of the file doc embeds under name, as stored
// in the file (compressed): bytes no other part of a PDF holds.
func embeddedData(t *testing.T, doc []byte, name string) []byte {
	t.Helper()
	d, err := pdf.Open(context.Background(), doc, pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, cat, _ := d.Catalog()
	files, err := embeddedFiles(d, cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.name == name {
			spec, _ := d.Dict(f.spec)
			ef, _ := d.Dict(spec["EF"])
			if st := embeddedStream(d, ef); st != nil && len(st.Data) > 0 {
				return st.Data
			}
		}
	}
	t.Fatalf("the PDF embeds no data under %q", name)
	return nil
}

// noise is n bytes that do not compress, so that their deflated form is
// long and found nowhere else.
func noise(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestAttachmentsAndDetach(t *testing.T) {
	in := do(t, Request{Op: OpAttach, Files: []File{{"in.pdf", pdftest.OnePage("x")},
		{"data.json", noise(1, 3000)}, {"dir/invoice.xml", noise(2, 5000)}}}).Data
	list := listAttachments(t, in)
	size := func(n int64) *int64 { return &n }
	want := []Attachment{
		{Name: "data.json", FileName: "data.json", Size: size(3000), MIMEType: "application/json", Relationship: "Unspecified"},
		{Name: "invoice.xml", FileName: "invoice.xml", Size: size(5000), MIMEType: "text/xml", Relationship: "Unspecified"},
	}
	if !sameAttachments(list, want) {
		t.Fatalf("attachments: %s, want %s", jsonOf(list), jsonOf(want))
	}
	removed, kept := embeddedData(t, in, "invoice.xml"), embeddedData(t, in, "data.json")
	if !bytes.Contains(in, removed) {
		t.Fatal("the attached file's data is not in the PDF as stored")
	}

	res := do(t, Request{Op: OpDetach, Name: "invoice.xml", Files: one("in.pdf", in)})
	out := res.Data
	qpdfClean(t, out)
	if res.ContentType != TypePDF || res.Pages != 1 {
		t.Errorf("detach answered %s of %d pages", res.ContentType, res.Pages)
	}
	if list := listAttachments(t, out); !sameAttachments(list, want[:1]) {
		t.Errorf("attachments after detach: %s, want %s", jsonOf(list), jsonOf(want[:1]))
	}
	if got := tool(t, out, "pdfdetach", "-list"); !strings.Contains(got, "1 embedded files") || strings.Contains(got, "invoice.xml") {
		t.Errorf("pdfdetach -list after detach:\n%s", got)
	}
	if bytes.Contains(out, removed) {
		t.Error("the detached file's data is still in the PDF (an earlier revision?)")
	}
	if !bytes.Contains(out, kept) {
		t.Error("the file kept lost its data")
	}

	last := do(t, Request{Op: OpDetach, Name: "data.json", Files: one("out.pdf", out)}).Data
	qpdfClean(t, last)
	if list := listAttachments(t, last); len(list) != 0 || bytes.Contains(last, kept) || bytes.Contains(last, []byte("/EmbeddedFiles")) {
		t.Errorf("detaching the last file leaves %s, or its data, or the tree", jsonOf(list))
	}
}

// sameAttachments compares attachments, their sizes by value.
func sameAttachments(got, want []Attachment) bool {
	return jsonOf(got) == jsonOf(want)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestDetachRefusesAnUnknownName(t *testing.T) {
	in := do(t, Request{Op: OpAttach, Files: []File{{"in.pdf", pdftest.OnePage("x")}, {"notes.txt", []byte("notes")}}}).Data
	for _, c := range []struct {
		doc  []byte
		name string
		says string
	}{
		{in, "Notes.txt", `"Notes.txt" is not the name of a file the PDF embeds: it embeds "notes.txt"`},
		{pdftest.OnePage("x"), "notes.txt", "it embeds none"},
	} {
		got, err := code(t, Request{Op: OpDetach, Name: c.name, Files: one("in.pdf", c.doc)})
		qe, _ := asClientError(err)
		if got != quire.CodeValidation || len(qe.Details) != 1 || qe.Details[0].Field != "name" || !strings.Contains(qe.Details[0].Issue, c.says) {
			t.Errorf("detach %q: %s %v, want a validation error on name: %s", c.name, got, err, c.says)
		}
	}
}

// TestDetachOfASignedPDF: attachments reads a signed PDF; detach, which
// rewrites it, refuses it unless forced.
func TestDetachOfASignedPDF(t *testing.T) {
	in := do(t, Request{Op: OpAttach, Files: []File{{"signed.pdf", signed(t, 1)}, {"notes.txt", []byte("notes")}}}).Data
	if list := listAttachments(t, in); len(list) != 1 || list[0].Name != "notes.txt" {
		t.Errorf("attachments of a signed PDF: %s", jsonOf(list))
	}
	req := Request{Op: OpDetach, Name: "notes.txt", Files: one("signed.pdf", in)}
	got, err := code(t, req)
	if got != quire.CodeUnprocessable || !strings.Contains(err.Error(), "signed") || !strings.Contains(err.Error(), "force=true") {
		t.Errorf("detach of a signed PDF: %v, want 422 naming the signature and force=true", err)
	}
	req.Force = true
	if list := listAttachments(t, do(t, req).Data); len(list) != 0 {
		t.Errorf("forced detach leaves %s", jsonOf(list))
	}
}

// TestDetachFacturX: detaching a Factur-X invoice's XML removes it from
// the catalog's associated files and the Factur-X description from the
// XMP, and leaves a PDF/A-3b.
func TestDetachFacturX(t *testing.T) {
	in := do(t, Request{Op: OpAttach, FacturX: true, Files: []File{{"invoice.pdf", pdfaInput(t)},
		{"factur-x.xml", invoice("urn:cen.eu:en16931:2017")}, {"photo.bin", noise(3, 2000)}}}).Data
	list := listAttachments(t, in)
	if len(list) != 2 || list[0].Name != "factur-x.xml" || list[0].Relationship != "Alternative" || list[0].MIMEType != "text/xml" {
		t.Fatalf("attachments of the invoice: %s", jsonOf(list))
	}
	removed := embeddedData(t, in, "factur-x.xml")
	out := do(t, Request{Op: OpDetach, Name: "factur-x.xml", Files: one("invoice.pdf", in)}).Data
	qpdfClean(t, out)
	pdfatest.Check(t, out, 3)
	if list := listAttachments(t, out); len(list) != 1 || list[0].Name != "photo.bin" {
		t.Errorf("attachments after detach: %s", jsonOf(list))
	}
	d, err := pdf.Open(context.Background(), out, pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, cat, _ := d.Catalog()
	if af, ok := cat["AF"]; ok {
		t.Errorf("the catalog keeps /AF %v", af)
	}
	if bytes.Contains(out, removed) {
		t.Error("the invoice's data is still in the PDF")
	}
	xmp := tool(t, out, "pdfinfo", "-meta")
	if strings.Contains(xmp, "fx:DocumentFileName") || !strings.Contains(xmp, "pdfaid:part") {
		t.Errorf("the XMP after detach:\n%s", xmp)
	}
}

// withNameTree is a one-page PDF whose EmbeddedFiles name tree has two
// leaves under its root, the second keyed by a hex string.
func withNameTree(t *testing.T) []byte {
	t.Helper()
	d, err := pdf.Open(context.Background(), pdftest.OnePage("x"), pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	catRef, cat, _ := d.Catalog()
	cat = cat.Clone()
	spec := func(name string) pdf.Ref { return d.Add(fileSpec(name, []byte("data of "+name))) }
	first := d.Add(pdf.Dict{"Limits": pdf.Array{pdf.String("a.txt"), pdf.String("b.txt")},
		"Names": pdf.Array{pdf.String("a.txt"), spec("a.txt"), pdf.String("b.txt"), spec("b.txt")}})
	second := d.Add(pdf.Dict{"Limits": pdf.Array{pdf.HexString("c.txt"), pdf.HexString("c.txt")},
		"Names": pdf.Array{pdf.HexString("c.txt"), spec("c.txt")}})
	cat["Names"] = pdf.Dict{"EmbeddedFiles": d.Add(pdf.Dict{"Kids": pdf.Array{first, second}})}
	d.Replace(catRef, cat)
	out, err := d.Save()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDetachFromANameTreeOfLeaves: the files of every leaf are listed, a
// hex string's key as any other, and detach leaves the others, in a
// tree of one node.
func TestDetachFromANameTreeOfLeaves(t *testing.T) {
	in := withNameTree(t)
	names := func(list []Attachment) string {
		var out []string
		for _, a := range list {
			out = append(out, a.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(listAttachments(t, in)); got != "a.txt,b.txt,c.txt" {
		t.Fatalf("attachments: %s", got)
	}
	out := do(t, Request{Op: OpDetach, Name: "b.txt", Files: one("in.pdf", in)}).Data
	qpdfClean(t, out)
	list := listAttachments(t, out)
	if got := names(list); got != "a.txt,c.txt" || *list[1].Size != int64(len("data of c.txt")) {
		t.Errorf("attachments after detaching b.txt: %s", jsonOf(list))
	}
}

// TestHostileInputsThroughAttachments: the reader's pathological PDFs
// through attachments and detach end in a client error or a listing,
// the unrepairable ones in a refusal, within the memory bound of signing.
func TestHostileInputsThroughAttachments(t *testing.T) {
	for _, h := range pdftest.HostileFiles() {
		for _, op := range []string{OpAttachments, OpDetach} {
			req := Request{Op: op, Name: "a.txt", Files: one(h.Name+".pdf", h.PDF)}
			refusedWithinBound(t, h, req)
		}
	}
}

// TestAttachmentSizeOfALargeFile: a file that inflates to most of what
// the reader decodes of a document this small has its size (decoding it
// again within the document's decode budget, which CheckAll spent on it
// once, would fail); a file stored with a filter quire does not decode
// has none.
func TestAttachmentSizeOfALargeFile(t *testing.T) {
	const large = 6 << 20 // of a decode budget of 8 MiB and a little more, which CheckAll spends once
	in := do(t, Request{Op: OpAttach, Files: []File{{"in.pdf", pdftest.OnePage("x")}, {"zeros.bin", make([]byte, large)}, {"small.txt", []byte("small")}}}).Data
	list := listAttachments(t, in)
	if len(list) != 2 || list[0].Name != "small.txt" || list[0].Size == nil || *list[0].Size != 5 || list[1].Size == nil || *list[1].Size != large {
		t.Errorf("attachments: %s, want small.txt of 5 bytes and zeros.bin of %d", jsonOf(list), large)
	}
	for _, filter := range []pdf.Object{pdf.Name("ASCIIHexDecode"), pdf.Array{pdf.Name("FlateDecode"), pdf.Name("ASCIIHexDecode")}} {
		st := &pdf.Stream{Dict: pdf.Dict{"Filter": filter}, Data: pdf.Deflate([]byte("41>"))}
		if n := decodedSize(st, 1<<20); n != nil {
			t.Errorf("a stream of filters %v has a size: %d", filter, *n)
		}
	}
	plain := &pdf.Stream{Dict: pdf.Dict{"Filter": pdf.Array{}}, Data: []byte("plain")}
	if n := decodedSize(plain, 1<<20); n == nil || *n != 5 {
		t.Errorf("a stream of no filter: %v, want 5 bytes", n)
	}
}
