package libreoffice

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// The hostile-input suite: documents made to exhaust the engine or to
// get past the package checks. Each ends in a 4xx-mapped error, or in a
// PDF where the document is legitimately convertible, within a generous
// time (a job's limit is 60 s; nothing here may take several), and the
// pool serves afterwards.

// zeros returns n zero bytes deflated (about a thousandth of n).
func zeros(n int) []byte {
	const mib = 1 << 20
	data, _, _ := convtest.RepeatedDeflate(nil, make([]byte, mib), n/mib, make([]byte, n%mib))
	return data
}

// rawPart returns a DOCX with the part name made of the raw deflate data,
// with the sizes and checksum its header declares.
func rawPart(name string, data []byte, crc uint32, size uint64) []byte {
	return convtest.PackageWith(convtest.DOCXBody(convtest.Paragraphs(1, "hostile"), ""), &zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(len(data)), UncompressedSize64: size}, data)
}

// overlappingZIP is a package of n entries that all share one local file
// of size zeros (the "non-recursive zip bomb"): it inflates to n*size
// bytes from one copy of the data. One entry is word/document.xml, so that
// it passes for a DOCX.
func overlappingZIP(n, size int) []byte {
	data := zeros(size)
	crc := crc32.ChecksumIEEE(make([]byte, size))
	le := binary.LittleEndian
	var b bytes.Buffer
	local := make([]byte, 30)
	le.PutUint32(local, 0x04034b50)
	le.PutUint16(local[4:], 20)
	le.PutUint16(local[8:], 8) // deflate
	le.PutUint32(local[14:], crc)
	le.PutUint32(local[18:], uint32(len(data)))
	le.PutUint32(local[22:], uint32(size))
	le.PutUint16(local[26:], 1)
	b.Write(local)
	b.WriteString("x")
	b.Write(data)
	dirStart := b.Len()
	for i := range n {
		name := "word/document.xml"
		if i > 0 {
			name = "word/part" + strings.Repeat("x", i%50) + string(rune('a'+i%26)) + ".xml"
		}
		c := make([]byte, 46)
		le.PutUint32(c, 0x02014b50)
		le.PutUint16(c[4:], 20)
		le.PutUint16(c[6:], 20)
		le.PutUint16(c[10:], 8)
		le.PutUint32(c[16:], crc)
		le.PutUint32(c[20:], uint32(len(data)))
		le.PutUint32(c[24:], uint32(size))
		le.PutUint16(c[28:], uint16(len(name)))
		le.PutUint32(c[42:], 0) // every entry at offset 0
		b.Write(c)
		b.WriteString(name)
	}
	end := make([]byte, 22)
	le.PutUint32(end, 0x06054b50)
	le.PutUint16(end[8:], uint16(n))
	le.PutUint16(end[10:], uint16(n))
	le.PutUint32(end[12:], uint32(b.Len()-dirStart))
	le.PutUint32(end[16:], uint32(dirStart))
	b.Write(end)
	return b.Bytes()
}

// nestedDOCX is a DOCX holding a package that holds packages, depth deep,
// the innermost holding inner.
func nestedDOCX(depth int, inner []byte) []byte {
	for range depth {
		inner = zipOfBytes(map[string][]byte{"nested.zip": inner})
	}
	return convtest.DOCXWith(convtest.Paragraphs(1, "nested"), "", map[string]string{"word/embeddings/package.docx": string(inner)})
}

func zipOfBytes(parts map[string][]byte) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for name, body := range parts {
		w, _ := z.Create(name)
		w.Write(body)
	}
	z.Close()
	return b.Bytes()
}

// zerosZIP is a package of one entry of size zeros.
func zerosZIP(size int) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	h := &zip.FileHeader{Name: "zeros.bin", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(make([]byte, size)), UncompressedSize64: uint64(size)}
	data := zeros(size)
	h.CompressedSize64 = uint64(len(data))
	w, _ := z.CreateRaw(h)
	w.Write(data)
	z.Close()
	return b.Bytes()
}

// deepXML is a DOCX body nested depth elements deep (named apart, so
// that the package compresses like text and reaches LibreOffice).
func deepXML(depth int) []byte {
	var b strings.Builder
	for i := range depth {
		fmt.Fprintf(&b, `<w:customXml w:element="e%d">`, i)
	}
	b.WriteString(`<w:p><w:r><w:t>deep</w:t></w:r></w:p>`)
	b.WriteString(strings.Repeat(`</w:customXml>`, depth))
	return convtest.DOCXBody(b.String(), "")
}

// TestHostileDocuments: each hostile package is answered within a bound,
// with a 4xx error or a PDF, and the worker serves after them. The two
// documents of the memory issue (hugeRunDOCX, manyParagraphsDOCX) are not
// among them: TestIssueDocumentsAreRefusedBeforeLibreOffice sends them with
// the same default limits and asks more of the answer (its error, and that
// no worker saw them), and checking them again here cost seconds under -race.
func TestHostileDocuments(t *testing.T) {
	requireLibreOffice(t)
	const eachWithin = 45 * time.Second // generous; a job's own limit is below
	p := testPool(t, "lok", Options{PoolOptions: engine.PoolOptions{Workers: 1, JobTimeout: 30 * time.Second}})
	small := make([]byte, 1<<20)
	cases := []struct {
		name string
		in   []byte
		pdf  bool // legitimately convertible
	}{
		{"overlapping entries", overlappingZIP(300, 1<<20), false},
		{"a part larger than it declares", rawPart("word/document.xml", zeros(8<<20), crc32.ChecksumIEEE(make([]byte, 8<<20)), 1000), false},
		{"a part declaring a huge size", rawPart("word/media/huge.bin", zeros(1<<20), crc32.ChecksumIEEE(small), 1<<40), false},
		{"a wrong checksum", rawPart("word/media/x.bin", zeros(1<<20), 12345, 1<<20), false},
		{"packages nested 3 deep", nestedDOCX(3, []byte("x")), false},
		{"a nested package of 300 MiB", nestedDOCX(1, zerosZIP(300<<20)), false},
		{"XML nested 100,000 deep", deepXML(100_000), true}, // LibreOffice copes
		{"XML nested 200 deep", deepXML(200), true},
		{"an embedded package within limits", nestedDOCX(1, zerosZIP(1<<20)), true},
	}
	for _, c := range cases {
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), eachWithin)
		pdf, err := p.Convert(ctx, c.in, engine.FromDOCX)
		cancel()
		took := time.Since(t0)
		switch {
		case took > eachWithin || errors.Is(err, context.DeadlineExceeded):
			t.Errorf("%s: no answer within %v", c.name, eachWithin)
		case c.pdf && err != nil:
			t.Errorf("%s: %v, want a PDF", c.name, err)
		case c.pdf && !bytes.HasPrefix(pdf, []byte("%PDF-")):
			t.Errorf("%s: the answer is no PDF", c.name)
		case !c.pdf && (err == nil || apiCode(err) == "" || apiCode(err) == quire.CodeEngineBusy):
			t.Errorf("%s: %v, want a 4xx error", c.name, err)
		default:
			t.Logf("%s (%d KB): %v in %v", c.name, len(c.in)>>10, err, took.Round(time.Millisecond))
		}
	}
	if _, err := p.Convert(context.Background(), convtest.DOCXBody(convtest.Paragraphs(3, "after the hostile ones"), ""), engine.FromDOCX); err != nil {
		t.Fatalf("the pool does not serve after the hostile documents: %v", err)
	}
}
