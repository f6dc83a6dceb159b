package ooxml

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
)

type entry struct{ name, body string }

func build(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		if err := writeEntry(w, &zip.FileHeader{Name: e.name, Method: zip.Deflate}, content{data: []byte(e.body)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lying builds a package whose entry declares declared bytes but inflates to body.
func lying(t *testing.T, body []byte, declared uint64) []byte {
	t.Helper()
	var deflated bytes.Buffer
	fw, _ := flate.NewWriter(&deflated, flate.BestCompression)
	fw.Write(body)
	fw.Close()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	raw, err := w.CreateRaw(&zip.FileHeader{Name: "bomb.xml", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(body),
		CompressedSize64: uint64(deflated.Len()), UncompressedSize64: declared})
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(deflated.Bytes())
	w.Close()
	return buf.Bytes()
}

func TestOpenLimits(t *testing.T) {
	if _, err := Open([]byte("not a zip"), Limits{}); !errors.Is(err, ErrNotPackage) {
		t.Errorf("not a zip: %v", err)
	}
	three := build(t, entry{"a", "1"}, entry{"b", "2"}, entry{"c", "3"})
	if _, err := Open(three, Limits{MaxEntries: 2}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("entries: %v", err)
	}
	big := build(t, entry{"a", strings.Repeat("x", 600)}, entry{"b", strings.Repeat("x", 600)})
	if _, err := Open(big, Limits{MaxTotalSize: 1000}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("declared total: %v", err)
	}
	p, err := Open(big, Limits{MaxPartSize: 500})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read("a"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("part: %v", err)
	}
	if data, err := p.Read("missing"); data != nil || err != nil {
		t.Errorf("missing part: %q, %v", data, err)
	}
}

// TestReadDoesNotTrustHeaders inflates entries whose headers understate
// their size: reading stops at the limits, never holding more.
func TestReadDoesNotTrustHeaders(t *testing.T) {
	body := bytes.Repeat([]byte("<a/>"), 4<<20) // 16 MiB from about 16 KiB
	p, err := Open(lying(t, body, 100), Limits{MaxPartSize: 1 << 20, MaxTotalSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := p.Read("bomb.xml"); err == nil || len(data) > 0 {
		t.Errorf("read %d bytes, %v", len(data), err)
	}
	if p.read > 1<<20+1 {
		t.Errorf("inflated %d bytes", p.read)
	}
}

func TestReadTotalBudget(t *testing.T) {
	docx := build(t, entry{"a", strings.Repeat("x", 600)}, entry{"b", strings.Repeat("x", 600)})
	p, err := Open(docx, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	p.limits.MaxTotalSize = 1000 // as if the headers had understated the sizes
	if _, err := p.Read("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read("b"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("second part: %v", err)
	}
}

func TestRewriteCopiesUntouchedEntries(t *testing.T) {
	in := build(t, entry{"a.xml", "<a/>"}, entry{"b.xml", "<b/>"})
	p, _ := Open(in, Limits{})
	var e Edits
	e.Set(p, "b.xml", []byte("<b>new</b>"))
	e.Set(p, "c.bin", []byte("added"))
	out, err := p.Rewrite(&e, "a.xml")
	if err != nil {
		t.Fatal(err)
	}
	zin, _ := zip.NewReader(bytes.NewReader(in), int64(len(in)))
	zout, _ := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	if len(zout.File) != 3 || zout.File[2].Name != "c.bin" {
		t.Fatalf("entries %v", zout.File)
	}
	raw := func(f *zip.File) string { r, _ := f.OpenRaw(); b, _ := io.ReadAll(r); return string(b) }
	if raw(zin.File[0]) != raw(zout.File[0]) || zin.File[0].CRC32 != zout.File[0].CRC32 {
		t.Error("a.xml was not copied raw")
	}
	p2, _ := Open(out, Limits{})
	if b, _ := p2.Read("b.xml"); string(b) != "<b>new</b>" {
		t.Errorf("b.xml = %q", b)
	}
}

func TestParseLimits(t *testing.T) {
	deep := strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100)
	if _, err := Parse([]byte(deep), XMLLimits{MaxDepth: 50}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("depth: %v", err)
	}
	if _, err := Parse([]byte(deep), XMLLimits{MaxDepth: 100}); err != nil {
		t.Errorf("depth at the limit: %v", err)
	}
	many := "<r>" + strings.Repeat("<a/>", 100) + "</r>"
	if _, err := Parse([]byte(many), XMLLimits{MaxElements: 100}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("elements: %v", err)
	}
	for _, bad := range []string{"", "<a></b>", "<a/><b/>", "<a>", "text"} {
		if _, err := Parse([]byte(bad), XMLLimits{}); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseSpans(t *testing.T) {
	src := `<?xml version="1.0"?><w:doc xmlns:w="urn:w"><w:p a="1">x<!-- c -->y</w:p><w:e/></w:doc>`
	d, err := Parse([]byte(src), XMLLimits{})
	if err != nil {
		t.Fatal(err)
	}
	p, e := d.Root.Children[0], d.Root.Children[1]
	if got := string(d.Bytes(p.Outer)); got != `<w:p a="1">x<!-- c -->y</w:p>` {
		t.Errorf("outer %q", got)
	}
	if got := string(d.Bytes(p.Inner)); got != `x<!-- c -->y` || p.Text != "xy" {
		t.Errorf("inner %q, text %q", got, p.Text)
	}
	if e.Inner.Start != e.Outer.End || d.Prefix(e) != "w" || !e.Is("urn:w", "e") {
		t.Errorf("self-closing element %+v, prefix %q", e, d.Prefix(e))
	}
	out := Splice(d.Data, Edit{p.Inner, "z"}, Edit{e.Outer, ""})
	if string(out) != `<?xml version="1.0"?><w:doc xmlns:w="urn:w"><w:p a="1">z</w:p></w:doc>` {
		t.Errorf("spliced %s", out)
	}
	root, _ := Parse([]byte(`<r x="1"/>`), XMLLimits{})
	if out, err := root.AppendChild("<c/>"); err != nil || string(out) != `<r x="1"><c/></r>` {
		t.Errorf("append to self-closing root: %s, %v", out, err)
	}
}

func TestCleanName(t *testing.T) {
	for name, want := range map[string]bool{
		"word/document.xml": true, "[Content_Types].xml": true, "word/": true, "a.b/c..d": true,
		"": false, ".": false, "..": false, "../x": false, "../../etc/passwd": false, "a/../../x": false,
		"/etc/passwd": false, `..\x`: false, `word\..\..\x`: false, "C:/x": false, "c:x": false,
		"a//b": false, "a/./b": false, "./a": false, "a\x00b": false, "//server/share": false,
	} {
		if got := CleanName(name); got != want {
			t.Errorf("CleanName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRewriteDropsUncleanNames(t *testing.T) {
	in := build(t, entry{"word/document.xml", "<w/>"}, entry{"../../etc/cron.d/x", "evil"},
		entry{`..\..\evil.bat`, "evil"}, entry{"/abs", "evil"}, entry{"C:/x", "evil"})
	p, err := Open(in, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var e Edits
	out, err := p.Rewrite(&e, "word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	zout, _ := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	if len(zout.File) != 1 || zout.File[0].Name != "word/document.xml" {
		var names []string
		for _, f := range zout.File {
			names = append(names, f.Name)
		}
		t.Fatalf("entries written: %q, want only word/document.xml", names)
	}
	e.Set(p, "../added.xml", []byte("x"))
	if _, err := p.Rewrite(&e, "word/document.xml"); err == nil {
		t.Error("Rewrite wrote a new part named ../added.xml")
	}
}

// A stored part is written with its CRC and sizes in its local header, no
// data descriptor after it: LibreOffice 25.2 takes the descriptor after
// stored data for a damaged package (TestESignDemo in httpapi waited the
// whole job timeout on an annotated template with a PNG).
func TestRewriteStoresWithoutDataDescriptor(t *testing.T) {
	in := build(t, entry{"word/document.xml", "<w/>"})
	p, _ := Open(in, Limits{})
	var e Edits
	png := []byte("\x89PNG\r\n\x1a\n not really a picture")
	e.Set(p, "word/media/image1.png", png)
	e.Set(p, "word/document.xml", []byte("<w>new</w>"))
	out, err := p.Rewrite(&e, "word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	zout, _ := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	for _, f := range zout.File {
		if f.Method == zip.Store && f.Flags&0x8 != 0 {
			t.Errorf("%s: stored with a data descriptor", f.Name)
		}
		if f.Name == "word/media/image1.png" {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			if b, err := io.ReadAll(r); err != nil || !bytes.Equal(b, png) {
				t.Errorf("image1.png = %q, %v", b, err)
			}
		}
	}
}

// TestRewriteSplicesAsItWrites: a part set with edits is written, stored
// (with the CRC of the spliced bytes) or deflated, as Splice would make it.
func TestRewriteSplicesAsItWrites(t *testing.T) {
	in := build(t, entry{"a.xml", "<a><b/></a>"})
	data := []byte("<a><b/><c/></a>")
	edits := []Edit{{Span: Span{Start: 3, End: 3}, With: "<new/>"}, {Span: Span{Start: 7, End: 11}, With: strings.Repeat("<row/>", 20_000)}}
	want := Splice(data, edits...)
	for _, stored := range []bool{false, true} {
		p, _ := Open(in, Limits{})
		e := Edits{Uncompressed: stored}
		e.SetSpliced(p, "a.xml", data, edits...)
		if got, _ := e.Get("a.xml"); !bytes.Equal(got, want) {
			t.Errorf("stored %v: Get gives %.40q, want the spliced part", stored, got)
		}
		out, err := p.Rewrite(&e, "a.xml")
		if err != nil {
			t.Fatal(err)
		}
		p2, err := Open(out, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := p2.Read("a.xml"); err != nil || !bytes.Equal(got, want) {
			t.Errorf("stored %v: a.xml reads back %.40q (%d bytes), %v; want %d bytes spliced", stored, got, len(got), err, len(want))
		}
	}
}

// TestRewriteStopsWhenTheContextEnds: a rewrite whose context has ended
// writes nothing more and says why.
func TestRewriteStopsWhenTheContextEnds(t *testing.T) {
	in := build(t, entry{"a.xml", "<a/>"})
	p, _ := Open(in, Limits{})
	var e Edits
	e.Set(p, "a.xml", bytes.Repeat([]byte("<row/>"), 1<<20))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if out, err := p.RewriteContext(ctx, &e, "a.xml"); !errors.Is(err, context.Canceled) || out != nil {
		t.Errorf("rewrite with an ended context: %d bytes, %v; want context.Canceled", len(out), err)
	}
}

// TestHeadPeeksWithinItsBound: Head reads at most n bytes of a part,
// whatever it declares, outside the package's limits; nil for a part the
// package lacks or cannot read.
func TestHeadPeeksWithinItsBound(t *testing.T) {
	p, err := Open(build(t, entry{"big.xml", strings.Repeat("x", 5000)}), Limits{MaxPartSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Head("big.xml", 1000); len(got) != 1000 {
		t.Errorf("Head of a 5000-byte part, bound 1000, part limit 100: %d bytes", len(got))
	}
	if got := p.Head("absent.xml", 64); got != nil {
		t.Errorf("Head of an absent part: %q", got)
	}
	lies, err := Open(lying(t, []byte(strings.Repeat("x", 5000)), 10), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := lies.Head("bomb.xml", 1<<20); got != nil {
		t.Errorf("Head of a part that inflates past what it declares: %d bytes, want nil (damaged)", len(got))
	}
	empty, err := Open(build(t, entry{"e.xml", ""}), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := empty.Head("e.xml", 64); got == nil || len(got) != 0 {
		t.Errorf("Head of an empty part: %v, want empty, not nil", got)
	}
	if files := empty.Files(); len(files) != 1 || files[0].Name != "e.xml" {
		t.Errorf("Files: %v", files)
	}
}
