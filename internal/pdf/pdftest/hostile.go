package pdftest

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Hostile is a pathological PDF made to exhaust a reader's memory, time
// or stack, or to trip its assumptions.
type Hostile struct {
	Name string
	PDF  []byte
	// Repairable: a reader may rebuild it and sign it soundly; otherwise
	// it must be refused as unreadable.
	Repairable bool
}

// HostileFiles returns the pathological PDFs that every entry point must
// refuse (or repair) with bounded work. Each is at most a few kilobytes.
func HostileFiles() []Hostile {
	catalog := "<< /Type /Catalog /Pages 2 0 R >>"
	pages := "<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
	page := "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"
	deep := make([]string, 0, 3000)
	deep = append(deep, catalog)
	for i := 2; i < 3000; i++ {
		deep = append(deep, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", i+1))
	}
	deep = append(deep, "<< /Type /Page /MediaBox [0 0 200 200] >>")
	bomb := FlateBomb(4 << 30)
	return []Hostile{
		// The file of issue #11: a reader that sizes its tables by the
		// highest object number wants gigabytes for it.
		{Name: "huge object number", PDF: []byte("%PDF-1.7\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n" +
			"2 0 obj <</Type /Pages /Kids [3 0 R] /Count 1>> endobj\n" +
			"3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 10 10]>> endobj\n2147483647 0 obj <</Root 1 0 R>> endobj\n")},
		{Name: "huge object number in the xref table", Repairable: true,
			PDF: withXRef(Objects(catalog, pages, page), "2147483646 1\n0000000009 00000 n \n", "/Size 2147483647")},
		{Name: "huge generation number", PDF: []byte("%PDF-1.7\n1 4294967295 obj\n" + catalog + "\nendobj\n" +
			"2 0 obj\n" + pages + "\nendobj\n3 0 obj\n" + page + "\nendobj\ntrailer\n<< /Root 1 4294967295 R >>\n")},
		{Name: "deep page tree", PDF: File(deep...)},
		{Name: "looping page tree", PDF: File(catalog, pages, "<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>")},
		{Name: "page tree kid is its own ancestor", PDF: File(catalog, "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
			page, "<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>")},
		{Name: "catalog /Pages is a page", Repairable: true,
			PDF: File("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Page /MediaBox [0 0 200 200] >>")},
		{Name: "/Count lies", Repairable: true, PDF: File(catalog, "<< /Type /Pages /Kids [3 0 R] /Count 2147483647 >>", page)},
		{Name: "flate bomb content stream", Repairable: true,
			PDF: File(catalog, pages, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>",
				streamObject("/Filter [/FlateDecode /FlateDecode]", bomb))},
		{Name: "flate bomb object stream", PDF: objStreamFile(bomb, 1)},
		{Name: "many flate bomb object streams", PDF: objStreamFile(bomb, 40)},
		{Name: "missing xref", Repairable: true, PDF: append(Objects(catalog, pages, page), "trailer\n<< /Root 1 0 R >>\n"...)},
		{Name: "no xref, no trailer", Repairable: true, PDF: Objects(catalog, pages, page)},
		{Name: "broken xref offsets", Repairable: true,
			PDF: withXRef(Objects(catalog, pages, page), "0 4\n0000000000 65535 f \n0000000001 00000 n \n0000000002 00000 n \n0000999999 00000 n \n", "/Size 4")},
		{Name: "xref stream with huge /Size", Repairable: true, PDF: xrefStream(Objects(catalog, pages, page), "/Size 2147483647 /W [1 2 1]", nil)},
		{Name: "xref stream with huge /W and /Index", Repairable: true,
			PDF: xrefStream(Objects(catalog, pages, page), "/Size 4 /W [8 8 8] /Index [0 1000000 1000000 1000000]", make([]byte, 48))},
		{Name: "object stream with lying /N and /First", PDF: objStreamLies()},
		{Name: "deeply nested arrays", PDF: File("<< /Type /Catalog /Pages 2 0 R /X "+strings.Repeat("[", 100000)+" >>", pages, page)},
		{Name: "deeply nested dictionaries", PDF: File("<< /Type /Catalog /Pages 2 0 R /X "+strings.Repeat("<< /A ", 50000)+" >>", pages, page)},
		{Name: "reference loop", PDF: File("2 0 R", "1 0 R")},
		// Each object's string holds all the later objects: a reader that
		// parses each object to its end reads the file once per object.
		{Name: "objects nested in strings", PDF: nestedInStrings(9000, false)},
		{Name: "pages nested in strings", PDF: nestedInStrings(9000, true)},
		{Name: "xref sections nested in trailer strings", PDF: nestedSections(4000, false), Repairable: true},
		{Name: "trailers nested in strings", PDF: nestedSections(4000, true), Repairable: true},
	}
}

// nestedSections writes n cross-reference sections chained by /Prev, each
// trailer holding a string that runs over all the sections after it; with
// broken, the file has no startxref and is read by rebuilding.
func nestedSections(n int, broken bool) []byte {
	b := bytes.NewBuffer(Objects("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 9 9] >>"))
	pad := strings.Repeat("x", 200)
	prev := -1
	for i := 0; i < n; i++ {
		at := b.Len()
		b.WriteString("xref\n0 0\ntrailer\n<< /Root 1 0 R ")
		if prev >= 0 {
			fmt.Fprintf(b, "/Prev %d ", prev)
		}
		b.WriteString("/Z (" + pad)
		prev = at
	}
	b.WriteString(strings.Repeat(") >>\n", n))
	if !broken {
		fmt.Fprintf(b, "startxref\n%d\n%%%%EOF\n", prev)
	}
	return b.Bytes()
}

// nestedInStrings writes n objects, each a dictionary with a literal string
// that holds the next object and ends after all of them; as pages, with a
// classic cross-reference table, or else without one.
func nestedInStrings(n int, pages bool) []byte {
	var b bytes.Buffer
	var offsets []int
	if pages {
		offsets = flatPages(&b, n, "/Count 1")
	} else {
		b.WriteString("%PDF-1.7\n")
		offsets = make([]int, n+3)
	}
	for i := 3; i < n+3; i++ {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 9 9] /X (", i)
	}
	b.WriteString(strings.Repeat(") >>\nendobj\n", n))
	if !pages {
		return b.Bytes()
	}
	XRef(&b, offsets[1:])
	return b.Bytes()
}

// Objects writes objects 1..n, as given, without cross-reference data.
func Objects(objects ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	for i, o := range objects {
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	return b.Bytes()
}

// withXRef appends a classic cross-reference table with the given rows
// and a trailer naming object 1 as the catalog.
func withXRef(pdf []byte, rows, trailer string) []byte {
	return fmt.Appendf(pdf, "xref\n%strailer\n<< %s /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", rows, trailer, len(pdf))
}

// xrefStream appends an xref stream object (number 99) with the given
// dictionary entries and rows, naming object 1 as the catalog.
func xrefStream(pdf []byte, dict string, rows []byte) []byte {
	at := len(pdf)
	pdf = fmt.Appendf(pdf, "99 0 obj\n<< /Type /XRef /Root 1 0 R %s /Length %d >>\nstream\n", dict, len(rows))
	pdf = append(pdf, rows...)
	return fmt.Appendf(pdf, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
}

func streamObject(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// objStreamFile puts the catalog, page tree and page into an object stream
// compressed twice, whose inner data is a flate bomb, n times over: the
// objects cannot be read without inflating the bomb.
func objStreamFile(bomb []byte, n int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", 10+i, streamObject("/Type /ObjStm /N 3 /First 12 /Filter [/FlateDecode /FlateDecode]", bomb))
	}
	b.WriteString("trailer\n<< /Root 1 0 R >>\n")
	return b.Bytes()
}

// objStreamLies holds the catalog in an object stream whose /N and /First
// promise far more than its data.
func objStreamLies() []byte {
	body := "1 0 << /Type /Catalog /Pages 2 0 R >>"
	pdf := Objects("null", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 9 9] >>",
		streamObject("/Type /ObjStm /N 1000000 /First 999999", []byte(body)))
	rows := []byte{2, 0, 4, 0, 1, 0, 9, 0, 1, 0, 9, 0, 1, 0, 9, 0}
	return xrefStream(pdf, "/Size 5 /W [1 2 1] /Index [1 4]", rows)
}

// FlateBomb returns zlib data that inflates to n zero bytes (rounded up to
// MiB), itself compressed with zlib: to be read with /Filter [/FlateDecode
// /FlateDecode]. Its inner stream repeats one deflate block for 1 MiB of
// zeros, which needs nothing but the zeros before it, and its checksum is
// wrong, since nothing should read that far.
func FlateBomb(n int64) []byte {
	var block bytes.Buffer
	fw, _ := flate.NewWriter(&block, flate.BestCompression)
	fw.Write(make([]byte, 1<<20))
	fw.Flush()
	inner := []byte{0x78, 0xda}
	inner = append(inner, bytes.Repeat(block.Bytes(), int((n+1<<20-1)>>20))...)
	inner = append(inner, 0x03, 0x00, 0, 0, 0, 0) // an empty final block, a checksum
	var outer bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&outer, zlib.BestCompression)
	zw.Write(inner)
	zw.Close()
	return outer.Bytes()
}

// Allocated returns the bytes allocated on the heap while f runs, by the
// whole process: runtime.MemStats.TotalAlloc counts every allocation,
// freed or not, so it bounds how far f can raise the heap, and unlike a
// sampled peak it does not depend on when the collector runs.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// MemoryBase is the fixed part of the memory one request may take
// whatever its size: the certificate page's rendering (about 7 MiB), the
// decompression every document is granted (8 MiB), the buffers of a
// signature. A request may take 10 times its body on top of it.
const MemoryBase = 32 << 20

// MemoryBound is what a request with a body of n bytes may allocate.
func MemoryBound(n int) uint64 { return MemoryBase + 10*uint64(n) }

// FuzzBound runs f, the work of one input of n bytes of a fuzz test, and
// fails t when f allocates more than MemoryBound(n): the bytes allocated
// measure the work, as a parser that reads the file once per object or
// inflates a bomb allocates as much. While fuzzing (go test -fuzz), an
// input that runs more than 5 s also crashes, since the fuzzer keeps only
// inputs that crash and a loop may allocate nothing; the seeds that go
// test runs are held to no time.
func FuzzBound(t testing.TB, n int, f func()) {
	t.Helper()
	if fuzzing := flag.Lookup("test.fuzz"); fuzzing != nil && fuzzing.Value.String() != "" {
		watchdog := time.AfterFunc(5*time.Second, func() { panic(t.Name() + ": input took more than 5s") })
		defer watchdog.Stop()
	}
	if a := Allocated(f); a > MemoryBound(n) {
		t.Fatalf("%d bytes allocated for an input of %d, more than %d", a, n, MemoryBound(n))
	}
}

// WidePageTree is a PDF whose one /Pages node has n tiny pages as its
// /Kids: about 100 bytes a page (200,000 pages: 20 MB), cheap to send and
// costly to hold parsed (issue #32).
func WidePageTree(n int) []byte {
	var b bytes.Buffer
	offsets := flatPages(&b, n, fmt.Sprintf("/Count %d", n))
	for i := 3; i < n+3; i++ {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 9 9] >>\nendobj\n", i)
	}
	XRef(&b, offsets[1:])
	return b.Bytes()
}

// flatPages starts a PDF in b with its catalog (object 1) and one /Pages
// node (object 2, with the dictionary entries given) whose /Kids are
// objects 3 to n+2. It returns the table of the objects' offsets, those
// of objects 1 and 2 filled in, with room for the kids'.
func flatPages(b *bytes.Buffer, n int, entries string) []int {
	b.WriteString("%PDF-1.7\n")
	offsets := make([]int, n+3)
	offsets[1] = b.Len()
	b.WriteString("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	offsets[2] = b.Len()
	fmt.Fprintf(b, "2 0 obj\n<< /Type /Pages %s /Kids [", entries)
	for i := 3; i < n+3; i++ {
		fmt.Fprintf(b, "%d 0 R ", i)
	}
	b.WriteString("] >>\nendobj\n")
	return offsets
}
