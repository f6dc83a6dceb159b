package convert

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestSniff(t *testing.T) {
	good := docx(paragraphs(1, "hello"), "")
	encryptedOOXML := cfb([]string{"EncryptionInfo", "EncryptedPackage"}, nil)
	fib := make([]byte, 12)
	binary.LittleEndian.PutUint16(fib, 0xA5EC)
	legacyDoc := cfb([]string{"WordDocument", "1Table"}, map[string][]byte{"WordDocument": fib})
	encFIB := append([]byte(nil), fib...)
	binary.LittleEndian.PutUint16(encFIB[10:], 0x0100)
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
		{"unknown format", "pptx", good, ErrUnsupportedFormat},
	} {
		err := sniff(c.in, c.from)
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
	err := sniff([]byte("%PDF-1.7"), "docx")
	if want := "declared docx, but it is not a ZIP package (it looks like a PDF file)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
