package convert

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/convert/convtest"
)

func TestSniff(t *testing.T) {
	good := docx(paragraphs(1, "hello"), "")
	encryptedOOXML := cfb([]string{"EncryptionInfo", "EncryptedPackage"}, nil)
	fib := make([]byte, 12)
	binary.LittleEndian.PutUint16(fib, 0xA5EC)
	legacyDoc := cfb([]string{"WordDocument", "1Table"}, map[string][]byte{"WordDocument": fib})
	encFIB := append([]byte(nil), fib...)
	binary.LittleEndian.PutUint16(encFIB[10:], 0x0100)
	bof := []byte{0x09, 0x08, 2, 0, 0, 0} // a BOF record of 2 bytes, then the next record's type
	legacyXLS := cfb([]string{"Workbook"}, map[string][]byte{"Workbook": append(bof, 0x3C, 0x00)})
	encryptedXLS := cfb([]string{"Workbook"}, map[string][]byte{"Workbook": append(bof, 0x2F, 0x00)})
	legacyPPT := cfb([]string{"PowerPoint Document", "Current User"}, nil)
	encryptedDoc := cfb([]string{"WordDocument", "1Table"}, map[string][]byte{"WordDocument": encFIB})
	odt := zipOf(map[string]string{"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": "<x/>",
		"META-INF/manifest.xml": "<manifest:manifest/>"})
	encryptedODT := zipOf(map[string]string{"mimetype": "application/vnd.oasis.opendocument.text",
		"META-INF/manifest.xml": `<manifest:file-entry><manifest:encryption-data/></manifest:file-entry>`})

	for _, c := range []struct {
		name, from string
		in         []byte
		want       error // nil: accepted
	}{
		{"docx", "docx", good, nil},
		{"docx without document part", "docx", zipOf(map[string]string{"word/styles.xml": "<x/>"}), ErrInvalidFormat},
		{"pdf as docx", "docx", []byte("%PDF-1.7\n..."), ErrInvalidFormat},
		{"empty", "docx", nil, ErrInvalidFormat},
		{"truncated docx", "docx", good[:len(good)/2], ErrUnprocessable},
		{"encrypted docx", "docx", encryptedOOXML, ErrEncrypted},
		{"legacy doc as docx", "docx", legacyDoc, ErrInvalidFormat},
		{"damaged compound file", "docx", append(append([]byte(nil), cfbSignature...), make([]byte, 600)...), ErrUnprocessable},
		{"doc", "doc", legacyDoc, nil},
		{"encrypted doc", "doc", encryptedDoc, ErrEncrypted},
		{"docx as doc", "doc", good, ErrInvalidFormat},
		{"odt", "odt", odt, nil},
		{"encrypted odt", "odt", encryptedODT, ErrEncrypted},
		{"docx as odt", "odt", good, ErrInvalidFormat},
		{"rtf with BOM", "rtf", []byte("\xef\xbb\xbf {\\rtf1\\ansi hello}"), nil},
		{"text as rtf", "rtf", []byte("hello"), ErrInvalidFormat},
		{"html", "html", []byte("\n<!DOCTYPE html><p>hi</p>"), nil},
		{"binary as html", "html", []byte("<\x00\x01"), ErrInvalidFormat},
		{"markdown", "md", []byte("# Title\n\ntext"), nil},
		{"latin-1 as markdown", "md", []byte("caf\xe9"), ErrInvalidFormat},
		{"unknown format", "pages", good, ErrUnsupportedFormat},
		{"xlsx", "xlsx", convtest.XLSX(2), nil},
		{"docx as xlsx", "xlsx", good, ErrInvalidFormat},
		{"pptx", "pptx", convtest.PPTX(1), nil},
		{"xlsx as pptx", "pptx", convtest.XLSX(2), ErrInvalidFormat},
		{"encrypted pptx", "pptx", encryptedOOXML, ErrEncrypted},
		{"ods", "ods", convtest.ODS(2), nil},
		{"odp as ods", "ods", convtest.ODP(1), ErrInvalidFormat},
		{"odp", "odp", convtest.ODP(1), nil},
		{"xls", "xls", legacyXLS, nil},
		{"encrypted xls", "xls", encryptedXLS, ErrEncrypted},
		{"doc as xls", "xls", legacyDoc, ErrInvalidFormat},
		{"ppt", "ppt", legacyPPT, nil},
		{"encrypted ppt", "ppt", cfb([]string{"PowerPoint Document", "EncryptedSummary"}, nil), ErrEncrypted},
		{"csv", "csv", convtest.CSV(2), nil},
		{"binary as csv", "csv", []byte("a,\x00b"), ErrInvalidFormat},
	} {
		_, err := sniff(c.in, c.from, nil)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: sniff = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestEncryptedIsUnprocessable(t *testing.T) {
	for _, err := range []error{ErrEncrypted, ErrTimeout, ErrCrashed} {
		if !errors.Is(err, ErrUnprocessable) {
			t.Errorf("%v does not match ErrUnprocessable", err)
		}
	}
}

func TestInvalidNamesWhatTheInputIs(t *testing.T) {
	_, err := sniff([]byte("%PDF-1.7"), "docx", nil)
	if want := "declared docx, but it is not a ZIP package (it looks like a PDF file)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// TestDetect tells formats from content, and text formats from the name.
func TestDetect(t *testing.T) {
	fib := make([]byte, 12)
	binary.LittleEndian.PutUint16(fib, 0xA5EC)
	encrypted := cfb([]string{"EncryptionInfo", "EncryptedPackage"}, nil)
	for _, c := range []struct {
		name string
		in   []byte
		want string // "": an error
		err  error
	}{
		{"report.docx", docx(paragraphs(1, "x"), ""), FromDOCX, nil},
		{"misnamed.pdf", docx(paragraphs(1, "x"), ""), FromDOCX, nil}, // the content decides
		{"", convtest.XLSX(1), FromXLSX, nil},
		{"deck", convtest.PPTX(1), FromPPTX, nil},
		{"a.ods", convtest.ODS(1), FromODS, nil},
		{"a.odp", convtest.ODP(1), FromODP, nil},
		{"a.odt", zipOf(map[string]string{"mimetype": "application/vnd.oasis.opendocument.text"}), FromODT, nil},
		{"old", cfb([]string{"WordDocument"}, map[string][]byte{"WordDocument": fib}), FromDOC, nil},
		{"old", cfb([]string{"Book"}, nil), FromXLS, nil},
		{"old", cfb([]string{"PowerPoint Document"}, nil), FromPPT, nil},
		{"x.txt", []byte("{\\rtf1 hi}"), FromRTF, nil},
		{"data.CSV", convtest.CSV(1), FromCSV, nil},
		{"notes.md", []byte("# hi"), FromMarkdown, nil},
		{"page.htm", []byte("<p>hi"), FromHTML, nil},
		{"", []byte("<!DOCTYPE html><p>hi"), FromHTML, nil},
		{"locked.xlsx", encrypted, FromXLSX, nil}, // sniff answers ErrEncrypted
		{"locked", encrypted, "", ErrEncrypted},
		{"notes.txt", []byte("plain words"), "", ErrInvalidFormat},
		{"", []byte("a,b\n1,2\n"), "", ErrInvalidFormat},
		{"scan.pdf", []byte("%PDF-1.7"), "", ErrInvalidFormat},
		{"a.zip", zipOf(map[string]string{"x.txt": "x"}), "", ErrInvalidFormat},
		{"data.csv", []byte("\x00\x01"), "", ErrInvalidFormat},
	} {
		got, err := Detect(c.name, c.in)
		if got != c.want || c.err != nil && !errors.Is(err, c.err) || c.err == nil && err != nil {
			t.Errorf("Detect(%q) = %q, %v; want %q, %v", c.name, got, err, c.want, c.err)
		}
	}
}

func TestMismatchNamesTheFormatFound(t *testing.T) {
	_, err := sniff(convtest.PPTX(1), FromXLSX, nil)
	if want := "declared xlsx, but the ZIP package has no xl/workbook.xml (it looks like a PowerPoint presentation (pptx))"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
