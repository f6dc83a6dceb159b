// Package pdftest builds small valid PDFs for tests of any package.
package pdftest

import (
	"bytes"
	"fmt"
	"os"
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
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
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
