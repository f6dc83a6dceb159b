package pdfsign

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdfsign/pdftest"
)

// xrefStreamFile builds a file whose only cross-reference section is an
// xref stream with the given /W, /Index and (unfiltered) rows.
func xrefStreamFile(w, index string, rows []byte) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	b.WriteString("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	b.WriteString("2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n")
	at := b.Len()
	fmt.Fprintf(&b, "3 0 obj\n<< /Type /XRef /Size 4 /Root 1 0 R /W %s /Index %s /Length %d >>\nstream\n", w, index, len(rows))
	b.Write(rows)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
	return b.Bytes()
}

func TestHostileXRefStreamRefusedQuickly(t *testing.T) {
	many := strings.Repeat("0 1000000 ", 100)
	cases := map[string][]byte{
		// Rows of zero bytes: /Index asks for 10^8 entries backed by nothing.
		"zero-width rows": xrefStreamFile("[0 0 0]", "["+many+"]", nil),
		// More rows than the data holds.
		"rows beyond the data": xrefStreamFile("[1 0 0]", "["+many+"]", make([]byte, 16)),
	}
	for name, pdf := range cases {
		if len(pdf) > 4<<10 {
			t.Fatalf("%s: test file of %d bytes is not small", name, len(pdf))
		}
		start := time.Now()
		_, err := Verify(pdf, nil)
		if !errorsIs(err, ErrUnreadable) {
			t.Errorf("%s: Verify: %v, want ErrUnreadable", name, err)
		}
		// Before the fix the first case took tens of seconds.
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: refused after %v", name, d)
		}
	}
}

func TestXRefRowsCappedOverAllSections(t *testing.T) {
	// Free entries (type 0) listed three times over: each pass is backed by
	// data, but together they exceed twice the object limit.
	pdf := xrefStreamFile("[1 0 0]", "[0 100 0 100 0 100]", make([]byte, 300))
	if _, err := readXRef(pdf, 100); err == nil || !strings.Contains(err.Error(), "more than 200 entries") {
		t.Fatalf("readXRef: %v, want the row cap", err)
	}
	// Within the cap the same file reads.
	if _, err := readXRef(xrefStreamFile("[1 0 0]", "[0 100 0 100]", make([]byte, 200)), 100); err != nil {
		t.Fatalf("readXRef within the cap: %v", err)
	}
}

func TestUnfilteredStreamCountsAgainstBudget(t *testing.T) {
	if _, _, err := decodeStream(Dict{}, make([]byte, 100), 99); err == nil {
		t.Fatal("an unfiltered stream larger than the budget was accepted")
	}
	if out, _, err := decodeStream(Dict{}, make([]byte, 100), 100); err != nil || len(out) != 100 {
		t.Fatalf("an unfiltered stream within the budget: %d bytes, %v", len(out), err)
	}
}

func TestPredictorRowNotAllocatedFromParameters(t *testing.T) {
	// /DecodeParms alone describe a row of 64 MiB.
	parms := Dict{"Predictor": Int(12), "Columns": Int(1 << 20), "Colors": Int(32), "BitsPerComponent": Int(16)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := unpredict([]byte{2}, parms)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("one byte of data accepted as a row of 64 MiB")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated for one byte of input", n)
	}
	// The same through a flate stream.
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte{2})
	zw.Close()
	if _, _, err := decodeStream(Dict{"Filter": Name("FlateDecode"), "DecodeParms": parms}, z.Bytes(), 1<<20); err == nil {
		t.Fatal("decodeStream accepted one byte as a row of 64 MiB")
	}
	// Well-formed rows still decode: "up" filter over two rows of 2 bytes.
	out, err := unpredict([]byte{0, 1, 2, 2, 1, 1}, Dict{"Predictor": Int(12), "Columns": Int(2)})
	if err != nil || !bytes.Equal(out, []byte{1, 2, 2, 3}) {
		t.Fatalf("unpredict: %v %v", out, err)
	}
	if out, err := unpredict(nil, parms); err != nil || len(out) != 0 {
		t.Fatalf("empty data: %v %v", out, err)
	}
}

// lostEndstreams builds a file of n pages whose page objects are streams
// with a wrong /Length and no "endstream" of their own: the only one is at
// the end of the file, so each stream runs up to it.
func lostEndstreams(n int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	offsets := make([]int, n+3)
	offsets[1] = b.Len()
	b.WriteString("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	offsets[2] = b.Len()
	fmt.Fprintf(&b, "2 0 obj\n<< /Type /Pages /Count %d /MediaBox [0 0 200 100] /Kids [", n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d 0 R ", 3+i)
	}
	b.WriteString("] >>\nendobj\n")
	for i := 0; i < n; i++ {
		offsets[3+i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n<< /Type /Page /Parent 2 0 R /Length 1 >>\nstream\n%s\n", 3+i, strings.Repeat("e", 200))
	}
	b.WriteString("endstream\nendobj\n")
	at := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", n+3)
	for _, off := range offsets[1:] {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", n+3, at)
	return b.Bytes()
}

func TestWrongLengthsScanFileOnce(t *testing.T) {
	pdf := lostEndstreams(2000)
	d, err := readDocument(pdf, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := d.pages()
	if err != nil || len(pages) != 2000 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	for _, p := range pages {
		if st, ok := d.cache[p.ref.Num].(*Stream); !ok || len(st.Data) < 200 {
			t.Fatalf("page %d: stream data not delimited by the last endstream", p.ref.Num)
		}
	}
	// Searching forward from each stream would read about n²/2 stream
	// lengths; the index reads the file once.
	if got := d.xref.ends.scanned; got > len(pdf) {
		t.Errorf("%d bytes searched for endstream in a file of %d", got, len(pdf))
	}
	if l, err := PageLayout(t.Context(), pdf); err != nil || l.Pages != 2000 || l.LastWidth != 200 {
		t.Errorf("PageLayout: %+v, %v", l, err)
	}
}

// withExtraFields adds n signature fields to a signed file, in an update:
// sharing the /V of its first signature, or each with a copy of it.
func withExtraFields(t *testing.T, signed []byte, n int, shareV bool) []byte {
	t.Helper()
	d, err := readDocument(signed, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	catRef, cat, _ := d.catalog()
	form, err := d.dict(cat["AcroForm"])
	if err != nil {
		t.Fatal(err)
	}
	fields, _ := d.array(form["Fields"])
	first, _ := d.dict(fields[0])
	vRef := first["V"].(Ref)
	sig, _ := d.dict(vRef)
	u := newUpdate(d)
	all := append(Array{}, fields...)
	for i := 0; i < n; i++ {
		v := vRef
		if !shareV {
			v = u.add(sig.clone())
		}
		all = append(all, u.add(Dict{"FT": Name("Sig"), "T": String(fmt.Sprintf("Extra%d", i)), "V": v}))
	}
	f := form.clone()
	f["Fields"] = all
	c := cat.clone()
	c["AcroForm"] = f
	u.replace(catRef, c)
	w, err := u.write()
	if err != nil {
		t.Fatal(err)
	}
	return w.pdf
}

func TestVerifySignatureCaps(t *testing.T) {
	id := testIdentity(t)
	signed, _, err := Sign(t.Context(), testPDF(t, 1, false, 0), id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 2000 fields naming one signature dictionary: one signature.
	shared := withExtraFields(t, signed, 2000, true)
	res, err := Verify(shared, id.Roots())
	if err != nil || len(res.Signers) != 1 || !res.Signers[0].SignatureValid {
		t.Fatalf("shared /V: %v, %d signers %+v", err, len(res.Signers), res)
	}
	// 100 signatures are verified; Sign adds no 101st.
	hundred := withExtraFields(t, signed, maxSignatures-1, false)
	if res, err := Verify(hundred, nil); err != nil || len(res.Signers) != maxSignatures {
		t.Fatalf("%d signatures: %v, %d signers", maxSignatures, err, len(res.Signers))
	}
	if _, _, err := Sign(t.Context(), hundred, id, Options{}); !errorsIs(err, ErrUnreadable) {
		t.Fatalf("Sign on %d signatures: %v, want ErrUnreadable", maxSignatures, err)
	}
	// Beyond the cap, Verify refuses.
	over := withExtraFields(t, signed, maxSignatures, false)
	if _, err := Verify(over, nil); !errorsIs(err, ErrUnreadable) {
		t.Fatalf("%d signatures: %v, want ErrUnreadable", maxSignatures+1, err)
	}
}

func TestDamagedInputForCertificatePages(t *testing.T) {
	id := testIdentity(t)
	good := pdftest.OnePage("host")
	brokenXRef := bytes.Replace(good, []byte("\nxref\n"), []byte("\nxreX\n"), 1)
	wrongOffsets := bytes.Replace(good, []byte("0000000015 00000 n"), []byte("0000000001 00000 n"), 1)
	cases := map[string][]byte{
		"junk before %PDF-": append([]byte("JUNK\r\n\x00\x01 garbage line\n"), good...),
		"broken xref":       brokenXRef,
		"wrong offsets":     wrongOffsets,
		"not a PDF":         []byte("hello"),
	}
	if bytes.Equal(wrongOffsets, good) || bytes.Equal(brokenXRef, good) {
		t.Fatal("damage not applied")
	}
	page := Page{MediaBox: [4]float64{0, 0, 300, 200}, Content: []byte("0 0 m 10 10 l S")}
	for name, in := range cases {
		l, err := PageLayout(t.Context(), in)
		if err != nil {
			if sentinel(err) == "" {
				t.Errorf("%s: PageLayout: %v matches no sentinel error", name, err)
			}
			continue
		}
		if _, err := ImportPages(t.Context(), in); err != nil && sentinel(err) == "" {
			t.Errorf("%s: ImportPages: %v matches no sentinel error", name, err)
		}
		out, err := AppendPages(t.Context(), in, []Page{page})
		if err != nil {
			if sentinel(err) == "" {
				t.Errorf("%s: AppendPages: %v matches no sentinel error", name, err)
			}
			continue
		}
		signed, _, err := Sign(t.Context(), out, id, Options{Page: l.Pages + 1})
		if err != nil {
			if sentinel(err) == "" {
				t.Errorf("%s: Sign: %v matches no sentinel error", name, err)
			}
			continue
		}
		res, err := Verify(signed, id.Roots())
		if err != nil || !res.Valid {
			t.Errorf("%s: signed output: %v %+v", name, err, res)
		}
		t.Logf("%s: repaired, %d page(s) before appending, signed", name, l.Pages)
	}
	// These damages are repairable: they must not merely be refused.
	for _, name := range []string{"junk before %PDF-", "broken xref"} {
		if _, err := AppendPages(t.Context(), cases[name], []Page{page}); err != nil {
			t.Errorf("%s: AppendPages: %v", name, err)
		}
	}
}

func TestAppendedPageIgnoresInheritedRotateAndCrop(t *testing.T) {
	in := pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 595 842] /CropBox [10 10 100 100] /Rotate 90 >>",
		"<< /Type /Page /Parent 2 0 R >>")
	out, err := AppendPages(t.Context(), in, []Page{{MediaBox: [4]float64{0, 0, 300, 200}, Content: []byte("0 0 m 10 10 l S")}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := readDocument(out, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := d.pages()
	if err != nil || len(pages) != 2 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	if rot := intOr(pages[0].inherited["Rotate"], 0); rot != 90 {
		t.Errorf("the existing page lost its inherited /Rotate: %d", rot)
	}
	last := pages[1].inherited
	if rot := intOr(last["Rotate"], -1); rot != 0 {
		t.Errorf("appended page /Rotate %v, want 0", last["Rotate"])
	}
	crop, err := d.box(last["CropBox"])
	if err != nil || crop != [4]float64{0, 0, 300, 200} {
		t.Errorf("appended page /CropBox %v (%v), want its MediaBox", crop, err)
	}
	if l, err := PageLayout(t.Context(), out); err != nil || l.LastWidth != 300 || l.LastHeight != 200 {
		t.Errorf("layout %+v, %v", l, err)
	}
}

func panicsForTest() error {
	var err error
	func() {
		defer catchPanic(&err)
		var m map[string]int
		m["boom"]++ // assignment to a nil map
	}()
	return err
}

func TestCatchPanicNamesWhere(t *testing.T) {
	err := panicsForTest()
	if !errorsIs(err, ErrUnreadable) {
		t.Fatalf("%v does not wrap ErrUnreadable", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "panicsForTest") || !strings.Contains(msg, "hostile_test.go:") {
		t.Errorf("the error does not say where the panic happened: %s", msg)
	}
	if strings.Contains(msg, "\n\t") || strings.Contains(msg, "runtime/debug") || strings.Contains(msg, "catchPanic") {
		t.Errorf("the error holds more than the condensed stack: %s", msg)
	}
	t.Log(msg)
}

// TestHostileFiles runs each pathological file of pdftest through what
// signing with a certificate page does (PageLayout, AppendPages, Sign)
// and through Verify. Each must be refused with a sentinel error or, for
// the repairable ones, signed into a file that verifies; within the
// memory bound of one request, and before a deadline that only a hang
// would reach.
func TestHostileFiles(t *testing.T) {
	id := testIdentity(t)
	for _, h := range pdftest.HostileFiles() {
		t.Run(h.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			var signed []byte
			var err error
			n := pdftest.Allocated(func() { signed, err = signWithPage(ctx, h.PDF, id) })
			t.Logf("%d bytes: %d allocated; %v", len(h.PDF), n, err)
			if ctx.Err() != nil {
				t.Fatalf("not done within the deadline: %v", err)
			}
			if n > pdftest.MemoryBound(len(h.PDF)) {
				t.Errorf("%d bytes allocated for a file of %d, more than %d", n, len(h.PDF), pdftest.MemoryBound(len(h.PDF)))
			}
			switch {
			case err != nil && sentinel(err) == "":
				t.Errorf("error matches no sentinel: %v", err)
			case err != nil && h.Repairable:
				t.Errorf("repairable file refused: %v", err)
			case err == nil && !h.Repairable:
				t.Errorf("unrepairable file signed")
			case err == nil:
				if res, err := Verify(signed, id.Roots()); err != nil || !res.Valid {
					t.Errorf("signed output does not verify: %v %+v", err, res)
				}
			}
			n = pdftest.Allocated(func() { _, err = Verify(h.PDF, nil) })
			if err != nil && sentinel(err) == "" {
				t.Errorf("Verify: error matches no sentinel: %v", err)
			}
			if n > pdftest.MemoryBound(len(h.PDF)) {
				t.Errorf("Verify: %d bytes allocated for a file of %d", n, len(h.PDF))
			}
		})
	}
}

// signWithPage does what the signing service does with the certificate
// page on: it appends a page the size of the last one and signs there.
func signWithPage(ctx context.Context, pdf []byte, id *Identity) ([]byte, error) {
	l, err := PageLayout(ctx, pdf)
	if err != nil {
		return nil, err
	}
	page := Page{MediaBox: [4]float64{0, 0, l.LastWidth, l.LastHeight}, Content: []byte("0 0 m 10 10 l S")}
	out, err := AppendPages(ctx, pdf, []Page{page})
	if err != nil {
		return nil, err
	}
	signed, _, err := Sign(ctx, out, id, Options{Page: l.Pages + 1, Rect: [4]float64{10, 10, 100, 50}})
	return signed, err
}

func TestRepairStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the client has gone
	damaged := pdftest.Objects("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>")
	page := Page{MediaBox: [4]float64{0, 0, 100, 100}}
	if _, err := PageLayout(ctx, damaged); !errors.Is(err, context.Canceled) {
		t.Errorf("PageLayout: %v, want context.Canceled", err)
	}
	if _, err := AppendPages(ctx, damaged, []Page{page}); !errors.Is(err, context.Canceled) {
		t.Errorf("AppendPages: %v, want context.Canceled", err)
	}
	if _, _, err := Sign(ctx, damaged, testIdentity(t), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Sign: %v, want context.Canceled", err)
	}
	// The same file repairs while the context lives.
	if l, err := PageLayout(t.Context(), damaged); err != nil || l.Pages != 1 {
		t.Errorf("PageLayout with a live context: %+v %v", l, err)
	}
}

func TestRebuildTakesNewestDefinition(t *testing.T) {
	// No cross-reference data; the page is defined twice, as by an update.
	pdf := append(pdftest.Objects("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>"),
		"3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] >>\nendobj\n"...)
	l, err := PageLayout(t.Context(), pdf)
	if err != nil || l.Pages != 1 || l.LastWidth != 300 || l.LastHeight != 200 {
		t.Fatalf("layout %+v, %v: want the newest page 3, 300 x 200", l, err)
	}
	requireTool(t, "qpdf", "qpdf")
	fixed, err := rebuild(t.Context(), pdf, Limits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if msg, ok := qpdfClean(t, fixed); !ok {
		t.Errorf("qpdf --check on the rebuilt file:\n%s", msg)
	}
}
