package docid

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
)

func TestNotDOCX(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"plain text", []byte("test file content")},
		{"PDF", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n")},
		{"ZIP without word/document.xml", buildZip(t, zip.Deflate, part{"mimetype", "application/vnd.oasis.opendocument.text"}, part{"content.xml", "<x/>"})},
		{"truncated DOCX", buildDocx(t)[:200]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Identify(tt.data); !errors.Is(err, ErrNotDOCX) {
				t.Errorf("Identify: %v, want ErrNotDOCX", err)
			}
			if _, err := Stamp(tt.data, Identity{GUID: "g", Created: "c"}); !errors.Is(err, ErrNotDOCX) {
				t.Errorf("Stamp: %v, want ErrNotDOCX", err)
			}
		})
	}
}

// TestTruncations cuts a DOCX at every length: an error or an identity, never a panic.
func TestTruncations(t *testing.T) {
	t.Parallel()
	docx := buildDocx(t, part{settingsPart, settingsXML("{G}")}, part{corePart, coreXML("T")})
	for n := range len(docx) {
		id, err := Identify(docx[:n])
		if err == nil && !strings.HasPrefix(id.ID, "HASH-") {
			t.Fatalf("length %d: %+v", n, id)
		}
		_, _ = Stamp(docx[:n], Identity{GUID: "g", Created: "c"})
	}
}

func TestZipBomb(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat(" ", MaxPartSize+1)
	t.Run("declared size", func(t *testing.T) {
		docx := buildDocx(t, part{settingsPart, settingsXML("{G}") + huge})
		if _, err := Identify(docx); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Identify: %v, want ErrTooLarge", err)
		}
		if _, err := Stamp(docx, Identity{GUID: "g", Created: "c"}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Stamp: %v, want ErrTooLarge", err)
		}
	})
	t.Run("size header lies", func(t *testing.T) {
		// archive/zip stops at the declared size: the part is corrupt, so missing.
		docx := lyingEntry(t, corePart, []byte(coreXML("T")+huge), 100)
		if id, err := Identify(docx); err != nil || id.Created == "T" {
			t.Errorf("Identify: %+v, %v; want the fallback", id, err)
		}
	})
	t.Run("too many entries", func(t *testing.T) {
		parts := make([]part, MaxEntries)
		for i := range parts {
			parts[i] = part{name: "word/media/x" + string(rune('a'+i%26)) + strings.Repeat("y", i/26)}
		}
		docx := buildDocx(t, parts...)
		if _, err := Identify(docx); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Identify: %v, want ErrTooLarge", err)
		}
	})
}

// lyingEntry builds a DOCX whose extra entry declares a size of declared
// bytes while its deflated data inflates to all of body.
func lyingEntry(t *testing.T, name string, body []byte, declared uint64) []byte {
	t.Helper()
	var deflated bytes.Buffer
	fw, err := flate.NewWriter(&deflated, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(body)
	fw.Close()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, p := range []part{{contentTypesPart, testContentTypes}, {documentPart, testDocument}} {
		if err := writeEntry(w, &zip.FileHeader{Name: p.name, Method: zip.Deflate}, []byte(p.body)); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := w.CreateRaw(&zip.FileHeader{
		Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(body),
		CompressedSize64: uint64(deflated.Len()), UncompressedSize64: declared,
	})
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(deflated.Bytes())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestHugeXMLWithinLimits(t *testing.T) {
	t.Parallel()
	const size = MaxPartSize - 1<<20
	tests := []struct {
		name, core string
		created    string // "" when the fallback applies
	}{
		{"long text", coreXML(strings.Repeat("9", size)), strings.Repeat("9", size)},
		{"deep nesting", coreXML("T") + strings.Repeat("<a>", size/3), ""},
		{"many comments splitting the text", coreXML(strings.Repeat("1<!---->", size/8)), strings.Repeat("1", size/8)},
		{"many attributes", strings.Replace(coreXML("T"), "<dc:creator", "<dc:creator"+manyAttributes(size/12), 1), "T"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docx := buildDocx(t, part{customPart, customXML("G")}, part{corePart, tt.core})
			id, err := Identify(docx)
			if err != nil {
				t.Fatal(err)
			}
			if tt.created != "" && id.Created != tt.created {
				t.Errorf("Created has %d bytes, want %d", len(id.Created), len(tt.created))
			}
			if tt.created == "" && !id.Generated {
				t.Errorf("got metadata identity %s for malformed core properties", id.ID)
			}
		})
	}
}

func manyAttributes(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " a%d=\"\"", i)
	}
	return b.String()
}
