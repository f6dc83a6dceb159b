package safeinput

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

func TestSniff(t *testing.T) {
	good := convtest.DOCXBody(convtest.Paragraphs(1, "hello"), "")
	encryptedOOXML := convtest.CFB([]string{"EncryptionInfo", "EncryptedPackage"}, nil)
	fib := make([]byte, 12)
	binary.LittleEndian.PutUint16(fib, 0xA5EC)
	legacyDoc := convtest.CFB([]string{"WordDocument", "1Table"}, map[string][]byte{"WordDocument": fib})
	encFIB := append([]byte(nil), fib...)
	binary.LittleEndian.PutUint16(encFIB[10:], 0x0100)
	bof := []byte{0x09, 0x08, 2, 0, 0, 0} // a BOF record of 2 bytes, then the next record's type
	legacyXLS := convtest.CFB([]string{"Workbook"}, map[string][]byte{"Workbook": append(bof, 0x3C, 0x00)})
	encryptedXLS := convtest.CFB([]string{"Workbook"}, map[string][]byte{"Workbook": append(bof, 0x2F, 0x00)})
	legacyPPT := convtest.CFB([]string{"PowerPoint Document", "Current User"}, nil)
	encryptedDoc := convtest.CFB([]string{"WordDocument", "1Table"}, map[string][]byte{"WordDocument": encFIB})
	odt := convtest.Zip(map[string]string{"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": "<x/>",
		"META-INF/manifest.xml": "<manifest:manifest/>"})
	encryptedODT := convtest.Zip(map[string]string{"mimetype": "application/vnd.oasis.opendocument.text",
		"META-INF/manifest.xml": `<manifest:file-entry><manifest:encryption-data/></manifest:file-entry>`})

	for _, c := range []struct {
		name, from string
		in         []byte
		want       error // nil: accepted
	}{
		{"docx", "docx", good, nil},
		{"docx without document part", "docx", convtest.Zip(map[string]string{"word/styles.xml": "<x/>"}), engine.ErrInvalidFormat},
		{"pdf as docx", "docx", []byte("%PDF-1.7\n..."), engine.ErrInvalidFormat},
		{"empty", "docx", nil, engine.ErrInvalidFormat},
		{"truncated docx", "docx", good[:len(good)/2], engine.ErrUnprocessable},
		{"encrypted docx", "docx", encryptedOOXML, engine.ErrEncrypted},
		{"legacy doc as docx", "docx", legacyDoc, engine.ErrInvalidFormat},
		{"damaged compound file", "docx", append(append([]byte(nil), cfbSignature...), make([]byte, 600)...), engine.ErrUnprocessable},
		{"doc", "doc", legacyDoc, nil},
		{"encrypted doc", "doc", encryptedDoc, engine.ErrEncrypted},
		{"docx as doc", "doc", good, engine.ErrInvalidFormat},
		{"odt", "odt", odt, nil},
		{"encrypted odt", "odt", encryptedODT, engine.ErrEncrypted},
		{"docx as odt", "odt", good, engine.ErrInvalidFormat},
		{"rtf with BOM", "rtf", []byte("\xef\xbb\xbf {\\rtf1\\ansi hello}"), nil},
		{"text as rtf", "rtf", []byte("hello"), engine.ErrInvalidFormat},
		{"html", "html", []byte("\n<!DOCTYPE html><p>hi</p>"), nil},
		{"binary as html", "html", []byte("<\x00\x01"), engine.ErrInvalidFormat},
		{"markdown", "md", []byte("# Title\n\ntext"), nil},
		{"latin-1 as markdown", "md", []byte("caf\xe9"), engine.ErrInvalidFormat},
		{"unknown format", "pages", good, engine.ErrUnsupportedFormat},
		{"xlsx", "xlsx", convtest.XLSX(2), nil},
		{"docx as xlsx", "xlsx", good, engine.ErrInvalidFormat},
		{"pptx", "pptx", convtest.PPTX(1), nil},
		{"xlsx as pptx", "pptx", convtest.XLSX(2), engine.ErrInvalidFormat},
		{"encrypted pptx", "pptx", encryptedOOXML, engine.ErrEncrypted},
		{"ods", "ods", convtest.ODS(2), nil},
		{"odp as ods", "ods", convtest.ODP(1), engine.ErrInvalidFormat},
		{"odp", "odp", convtest.ODP(1), nil},
		{"xls", "xls", legacyXLS, nil},
		{"encrypted xls", "xls", encryptedXLS, engine.ErrEncrypted},
		{"doc as xls", "xls", legacyDoc, engine.ErrInvalidFormat},
		{"ppt", "ppt", legacyPPT, nil},
		{"encrypted ppt", "ppt", convtest.CFB([]string{"PowerPoint Document", "EncryptedSummary"}, nil), engine.ErrEncrypted},
		{"csv", "csv", convtest.CSV(2), nil},
		{"binary as csv", "csv", []byte("a,\x00b"), engine.ErrInvalidFormat},
	} {
		_, err := sniff(c.in, c.from, nil)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: sniff = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestEncryptedIsUnprocessable(t *testing.T) {
	for _, err := range []error{engine.ErrEncrypted, engine.ErrTimeout, engine.ErrCrashed} {
		if !errors.Is(err, engine.ErrUnprocessable) {
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
	encrypted := convtest.CFB([]string{"EncryptionInfo", "EncryptedPackage"}, nil)
	for _, c := range []struct {
		name string
		in   []byte
		want string // "": an error
		err  error
	}{
		{"report.docx", convtest.DOCXBody(convtest.Paragraphs(1, "x"), ""), engine.FromDOCX, nil},
		{"misnamed.pdf", convtest.DOCXBody(convtest.Paragraphs(1, "x"), ""), engine.FromDOCX, nil}, // the content decides
		{"", convtest.XLSX(1), engine.FromXLSX, nil},
		{"deck", convtest.PPTX(1), engine.FromPPTX, nil},
		{"a.ods", convtest.ODS(1), engine.FromODS, nil},
		{"a.odp", convtest.ODP(1), engine.FromODP, nil},
		{"a.odt", convtest.Zip(map[string]string{"mimetype": "application/vnd.oasis.opendocument.text"}), engine.FromODT, nil},
		{"old", convtest.CFB([]string{"WordDocument"}, map[string][]byte{"WordDocument": fib}), engine.FromDOC, nil},
		{"old", convtest.CFB([]string{"Book"}, nil), engine.FromXLS, nil},
		{"old", convtest.CFB([]string{"PowerPoint Document"}, nil), engine.FromPPT, nil},
		{"x.txt", []byte("{\\rtf1 hi}"), engine.FromRTF, nil},
		{"data.CSV", convtest.CSV(1), engine.FromCSV, nil},
		{"notes.md", []byte("# hi"), engine.FromMarkdown, nil},
		{"page.htm", []byte("<p>hi"), engine.FromHTML, nil},
		{"", []byte("<!DOCTYPE html><p>hi"), engine.FromHTML, nil},
		{"locked.xlsx", encrypted, engine.FromXLSX, nil}, // sniff answers ErrEncrypted
		{"locked", encrypted, "", engine.ErrEncrypted},
		{"notes.txt", []byte("plain words"), "", engine.ErrInvalidFormat},
		{"", []byte("a,b\n1,2\n"), "", engine.ErrInvalidFormat},
		{"scan.pdf", []byte("%PDF-1.7"), "", engine.ErrInvalidFormat},
		{"a.zip", convtest.Zip(map[string]string{"x.txt": "x"}), "", engine.ErrInvalidFormat},
		{"data.csv", []byte("\x00\x01"), "", engine.ErrInvalidFormat},
	} {
		got, err := Detect(c.name, c.in)
		if got != c.want || c.err != nil && !errors.Is(err, c.err) || c.err == nil && err != nil {
			t.Errorf("Detect(%q) = %q, %v; want %q, %v", c.name, got, err, c.want, c.err)
		}
	}
}

func TestMismatchNamesTheFormatFound(t *testing.T) {
	_, err := sniff(convtest.PPTX(1), engine.FromXLSX, nil)
	if want := "declared xlsx, but the ZIP package has no xl/workbook.xml (it looks like a PowerPoint presentation (pptx))"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
