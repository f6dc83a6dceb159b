package certpage

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"fmt"
	"math"
	"strconv"
	"sync"
)

// pdfWriter writes a PDF file object by object, with a classic cross-reference
// table and no object streams: the certificate pages are grafted into the
// signed document by copying their objects, which is easiest when every
// object stands on its own in the file.
type pdfWriter struct {
	buf     bytes.Buffer
	offsets []int // byte offset of object i+1; 0 until written
	zw      *zlib.Writer
	zbuf    bytes.Buffer
}

func newPDFWriter() *pdfWriter {
	w := &pdfWriter{}
	// The comment line with bytes above 127 marks the file as binary.
	w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	w.zw = zlibWriters.Get().(*zlib.Writer)
	return w
}

// zlibWriters keeps compressors between renders: allocating one costs more
// than a small certificate's whole layout.
var zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

// alloc reserves an object number, so that objects can refer to each other
// before they are written.
func (w *pdfWriter) alloc() int {
	w.offsets = append(w.offsets, 0)
	return len(w.offsets)
}

func (w *pdfWriter) begin(num int) {
	w.offsets[num-1] = w.buf.Len()
	fmt.Fprintf(&w.buf, "%d 0 obj\n", num)
}

// object writes a non-stream object; body is its PDF syntax.
func (w *pdfWriter) object(num int, body string) {
	w.begin(num)
	w.buf.WriteString(body)
	w.buf.WriteString("\nendobj\n")
}

// stream compresses data with /FlateDecode and writes it as a stream object;
// dict holds the dictionary's other entries.
func (w *pdfWriter) stream(num int, dict string, data []byte) {
	w.zbuf.Reset()
	w.zw.Reset(&w.zbuf)
	w.zw.Write(data) // writes to a bytes.Buffer cannot fail
	w.zw.Close()
	w.compressedStream(num, dict, w.zbuf.Bytes())
}

// compressedStream writes data that is already zlib-compressed.
func (w *pdfWriter) compressedStream(num int, dict string, data []byte) {
	w.begin(num)
	fmt.Fprintf(&w.buf, "<< %s /Filter /FlateDecode /Length %d >>\nstream\n", dict, len(data))
	w.buf.Write(data)
	w.buf.WriteString("\nendstream\nendobj\n")
}

// finish writes the cross-reference table and trailer and returns the file.
// The file identifier is a hash of the content, so equal input gives equal
// output.
func (w *pdfWriter) finish(root int) []byte {
	zlibWriters.Put(w.zw)
	w.zw = nil
	sum := sha256.Sum256(w.buf.Bytes())
	xref := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", len(w.offsets)+1)
	for _, off := range w.offsets {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&w.buf, "trailer\n<< /Size %d /Root %d 0 R /ID [<%x> <%x>] >>\nstartxref\n%d\n%%%%EOF\n",
		len(w.offsets)+1, root, sum[:16], sum[:16], xref)
	return w.buf.Bytes()
}

// compress zlib-compresses data, for image samples that are compressed once
// when decoded rather than kept whole until the file is written.
func compress(data []byte) []byte {
	var b bytes.Buffer
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	zw.Reset(&b)
	zw.Write(data) // writes to a bytes.Buffer cannot fail
	zw.Close()
	return b.Bytes()
}

// appendNum appends a number in PDF syntax: rounded to three decimals, no
// exponent, no trailing zeros.
func appendNum(b []byte, v float64) []byte {
	v = math.Round(v*1000) / 1000
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}
