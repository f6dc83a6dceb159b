// Package pdftest builds small valid PDFs for tests of any package.
package pdftest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// OnePage returns a one-page A4 PDF showing text in Helvetica, with a
// classic cross-reference table. text must not contain parentheses or
// backslashes.
func OnePage(text string) []byte {
	content := "BT /F1 18 Tf 72 760 Td (" + text + ") Tj ET"
	return File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
}

// File writes objects 1..n, as given, with a classic cross-reference
// table; object 1 must be the catalog.
func File(objects ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	XRef(&b, offsets)
	return b.Bytes()
}

// XRef appends to b a classic cross-reference table of objects
// 1..len(offsets), at those offsets, and a trailer naming object 1 the
// catalog.
func XRef(b *bytes.Buffer, offsets []int) {
	at := b.Len()
	fmt.Fprintf(b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, at)
}

// WriteTemp writes pdf to a file in a temporary directory of the test, for
// command-line validators, and returns its path.
func WriteTemp(t testing.TB, pdf []byte) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "*.pdf")
	if err == nil {
		_, err = f.Write(pdf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// Generated builds a small valid PDF with n pages, its cross-reference data
// as a classic table or as a compressed xref stream; pad adds about that
// many bytes to the first page's content.
func Generated(n int, xrefStream bool, pad int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := map[int]int{}
	obj := func(num int, body string) {
		offsets[num] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", num, body)
	}
	kids := ""
	for i := 0; i < n; i++ {
		kids += fmt.Sprintf("%d 0 R ", 4+2*i)
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	obj(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d /MediaBox [0 0 595 842] >>", kids, n))
	obj(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i := 0; i < n; i++ {
		content := fmt.Sprintf("BT /F1 24 Tf 72 720 Td (Page %d) Tj ET", i+1)
		obj(4+2*i, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		if i == 0 && pad > 0 {
			// Comment lines: a large but valid content stream.
			content += "\n" + strings.Repeat("%"+strings.Repeat("x", 78)+"\n", pad/80)
		}
		obj(5+2*i, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	}
	size := 4 + 2*n
	xrefAt := b.Len()
	if !xrefStream {
		fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f\r\n", size)
		for i := 1; i < size; i++ {
			fmt.Fprintf(&b, "%010d 00000 n\r\n", offsets[i])
		}
		fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", size, xrefAt)
		return b.Bytes()
	}
	offsets[size] = xrefAt
	var rows bytes.Buffer
	rows.Write([]byte{0, 0, 0, 0, 0xff, 0xff})
	for i := 1; i <= size; i++ {
		o := offsets[i]
		rows.Write([]byte{1, byte(o >> 24), byte(o >> 16), byte(o >> 8), byte(o), 0})
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(rows.Bytes())
	zw.Close()
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 1] /Root 1 0 R /Filter /FlateDecode /Length %d >>\nstream\n",
		size, size+1, z.Len())
	b.Write(z.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xrefAt)
	return b.Bytes()
}

// RequireTool fails (never skips) when a validator is missing: a green
// run must mean the real tools accepted the output.
func RequireTool(t testing.TB, tool, debianPackage string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Fatalf("%s not found: install the Debian package %s (apt-get install %s)", tool, debianPackage, debianPackage)
	}
}

// QPDFClean runs qpdf --check on pdf and reports its output and whether
// it found neither errors nor warnings.
func QPDFClean(t testing.TB, pdf []byte) (string, bool) {
	t.Helper()
	out, err := exec.Command("qpdf", "--check", WriteTemp(t, pdf)).CombinedOutput()
	return string(out), err == nil && strings.Contains(string(out), "No syntax or stream encoding errors found") &&
		!strings.Contains(string(out), "WARNING")
}
