package pdf

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
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

// TestHostileXRefStreamRefusedBeforeItsRows measures the work a hostile
// /Index costs by the rows read and the bytes allocated, not by the time
// taken: before the fix the first case read 10^8 rows over tens of seconds.
// Not parallel: the allocation count is the whole process's.
func TestHostileXRefStreamRefusedBeforeItsRows(t *testing.T) {
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
		var err error
		n := pdftest.Allocated(func() { _, err = Read(pdf, Limits{}) })
		if !errorsIs(err, ErrUnreadable) {
			t.Errorf("%s: Read: %v, want ErrUnreadable", name, err)
		}
		// A million entries recorded would take tens of MiB.
		if n > 1<<20 {
			t.Errorf("%s: %d bytes allocated to refuse a file of %d", name, n, len(pdf))
		}
		if rows := rowsReadBeforeRefusal(t, pdf); rows != 0 {
			t.Errorf("%s: %d rows read before the section was refused", name, rows)
		}
	}
}

// rowsReadBeforeRefusal reads the last cross-reference section of pdf,
// which must be refused, and returns how many rows it read first.
func rowsReadBeforeRefusal(t *testing.T, pdf []byte) int {
	t.Helper()
	sx, err := lastStartXRef(pdf)
	if err != nil {
		t.Fatal(err)
	}
	x := &xrefInfo{entries: map[int]xrefEntry{}, ends: &streamEnds{}}
	if _, _, err := x.section(pdf, sx, DefaultLimits()); !errors.Is(err, errStructure) {
		t.Fatalf("section at %d: %v, want errStructure", sx, err)
	}
	return x.rows
}

func TestXRefRowsCappedOverAllSections(t *testing.T) {
	t.Parallel()
	// Free entries (type 0) listed three times over: each pass is backed by
	// data, but together they exceed twice the object limit.
	pdf := xrefStreamFile("[1 0 0]", "[0 100 0 100 0 100]", make([]byte, 300))
	if _, err := readXRef(pdf, Limits{MaxObjects: 100}.withDefaults()); err == nil || !strings.Contains(err.Error(), "more than 200 entries") {
		t.Fatalf("readXRef: %v, want the row cap", err)
	}
	// Within the cap the same file reads.
	if _, err := readXRef(xrefStreamFile("[1 0 0]", "[0 100 0 100]", make([]byte, 200)), Limits{MaxObjects: 100}.withDefaults()); err != nil {
		t.Fatalf("readXRef within the cap: %v", err)
	}
}

func TestUnfilteredStreamCountsAgainstBudget(t *testing.T) {
	t.Parallel()
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
	pdftest.XRef(&b, offsets[1:])
	return b.Bytes()
}

func TestWrongLengthsScanFileOnce(t *testing.T) {
	t.Parallel()
	pdf := lostEndstreams(2000)
	d, err := read(pdf, Limits{}, false)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := d.Pages()
	if err != nil || len(pages) != 2000 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	for _, p := range pages {
		if st, ok := d.cache[p.Ref.Num].(*Stream); !ok || len(st.Data) < 200 {
			t.Fatalf("page %d: stream data not delimited by the last endstream", p.Ref.Num)
		}
	}
	// Searching forward from each stream would read about n²/2 stream
	// lengths; the index reads the file once.
	if got := d.xref.ends.scanned; got > len(pdf) {
		t.Errorf("%d bytes searched for endstream in a file of %d", got, len(pdf))
	}
	if l, err := pageLayout(t.Context(), pdf); err != nil || l.pages != 2000 || l.width != 200 {
		t.Errorf("layout: %+v, %v", l, err)
	}
}

func TestAppendedPageIgnoresInheritedRotateAndCrop(t *testing.T) {
	t.Parallel()
	in := pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 595 842] /CropBox [10 10 100 100] /Rotate 90 >>",
		"<< /Type /Page /Parent 2 0 R >>")
	out, err := appended(t.Context(), in, []Page{{MediaBox: [4]float64{0, 0, 300, 200}, Content: []byte("0 0 m 10 10 l S")}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := read(out, Limits{}, false)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := d.Pages()
	if err != nil || len(pages) != 2 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	if rot := IntOr(pages[0].Inherited["Rotate"], 0); rot != 90 {
		t.Errorf("the existing page lost its inherited /Rotate: %d", rot)
	}
	last := pages[1].Inherited
	if rot := IntOr(last["Rotate"], -1); rot != 0 {
		t.Errorf("appended page /Rotate %v, want 0", last["Rotate"])
	}
	crop, err := d.box(last["CropBox"])
	if err != nil || crop != [4]float64{0, 0, 300, 200} {
		t.Errorf("appended page /CropBox %v (%v), want its MediaBox", crop, err)
	}
	if l, err := pageLayout(t.Context(), out); err != nil || l.width != 300 || l.height != 200 {
		t.Errorf("layout %+v, %v", l, err)
	}
}

func panicsForTest() error {
	var err error
	func() {
		defer Recover(&err)
		var m map[string]int
		m["boom"]++ // assignment to a nil map
	}()
	return err
}

func TestCatchPanicNamesWhere(t *testing.T) {
	t.Parallel()
	err := panicsForTest()
	if !errorsIs(err, ErrUnreadable) {
		t.Fatalf("%v does not wrap ErrUnreadable", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "panicsForTest") || !strings.Contains(msg, "hostile_test.go:") {
		t.Errorf("the error does not say where the panic happened: %s", msg)
	}
	if strings.Contains(msg, "\n\t") || strings.Contains(msg, "runtime/debug") || strings.Contains(msg, "Recover") {
		t.Errorf("the error holds more than the condensed stack: %s", msg)
	}
	t.Log(msg)
}

func TestRepairStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the client has gone
	damaged := pdftest.Objects("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>")
	if _, err := Open(ctx, damaged, Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open: %v, want context.Canceled", err)
	}
	// The same file repairs while the context lives.
	if l, err := pageLayout(t.Context(), damaged); err != nil || l.pages != 1 {
		t.Errorf("layout with a live context: %+v %v", l, err)
	}
}

func TestRebuildTakesNewestDefinition(t *testing.T) {
	t.Parallel()
	// No cross-reference data; the page is defined twice, as by an update.
	pdf := append(pdftest.Objects("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>"),
		"3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] >>\nendobj\n"...)
	l, err := pageLayout(t.Context(), pdf)
	if err != nil || l.pages != 1 || l.width != 300 || l.height != 200 {
		t.Fatalf("layout %+v, %v: want the newest page 3, 300 x 200", l, err)
	}
	pdftest.RequireTool(t, "qpdf", "qpdf")
	fixed, err := rebuild(t.Context(), pdf, Limits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if msg, ok := pdftest.QPDFClean(t, fixed); !ok {
		t.Errorf("qpdf --check on the rebuilt file:\n%s", msg)
	}
}

func TestNestingLimit(t *testing.T) {
	t.Parallel()
	nested := pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R /X [[[[[[[[[[1]]]]]]]]]] >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>")
	if _, err := Read(nested, Limits{}); err != nil {
		t.Fatalf("within the default limit: %v", err)
	}
	if _, err := Read(nested, Limits{MaxNesting: 5}); !errorsIs(err, ErrUnreadable) {
		t.Fatalf("arrays 10 deep with MaxNesting 5: %v, want ErrUnreadable", err)
	}
}
