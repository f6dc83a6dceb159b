package safeinput

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/ooxml"
)

// Input is checked before it reaches LibreOffice, for two reasons: a
// client that sends the wrong file deserves a clear 400 rather than
// whatever LibreOffice makes of it (it opens almost anything, a PDF as a
// drawing, binary junk as text), and password-protected files are
// recognised here for what they are, where LibreOffice would only fail.

// Check reports whether in looks like a document of format from, with the
// checks Prepare makes before a job is queued: callers can refuse bad
// input without starting an engine. Its errors match ErrUnsupportedFormat,
// ErrInvalidFormat, ErrUnprocessable or ErrEncrypted.
func Check(in []byte, from string) error {
	_, err := sniff(in, strings.ToLower(from), nil)
	return err
}

// sniff returns the opened package when in is an office package of
// format from (office.go), nil without an error when it looks like a
// document of format from of another kind, and otherwise an error
// matching ErrUnsupportedFormat, ErrInvalidFormat or ErrUnprocessable
// (ErrEncrypted for password-protected files). z is in's ZIP package
// when detect opened it already, else nil.
func sniff(in []byte, from string, z *ooxml.Package) (*officePackage, error) {
	switch from {
	case engine.FromDOCX, engine.FromXLSX, engine.FromPPTX:
		return sniffOOXML(in, from, z)
	case engine.FromODT, engine.FromODS, engine.FromODP:
		return sniffODF(in, from, z)
	}
	return nil, sniffFile(in, from)
}

// sniffFile is sniff for the formats that are not packages.
func sniffFile(in []byte, from string) error {
	switch from {
	case engine.FromDOC, engine.FromXLS, engine.FromPPT:
		return sniffCFB(in, from)
	case engine.FromRTF:
		if !bytes.HasPrefix(trimText(in), []byte(`{\rtf`)) {
			return invalid(from, in, `it does not start with {\rtf`)
		}
		return nil
	case engine.FromHTML:
		if isBinary(in) || !bytes.HasPrefix(trimText(in), []byte("<")) {
			return invalid(from, in, "it does not start with a markup tag")
		}
		return nil
	case engine.FromMarkdown:
		if isBinary(in) || !utf8.Valid(in) {
			return invalid(from, in, "it is not UTF-8 text")
		}
		return nil
	case engine.FromCSV: // any text encoding: LibreOffice detects it
		if isBinary(in) || len(in) == 0 {
			return invalid(from, in, "it is not text")
		}
		return nil
	}
	return fmt.Errorf("%w %q (accepted: %s)", engine.ErrUnsupportedFormat, from, strings.Join(engine.Formats, ", "))
}

// sniffOOXML accepts a ZIP package whose main part is of format from
// (ooxmlFormat). A compound file with an EncryptionInfo stream is a
// password-protected OOXML file.
func sniffOOXML(in []byte, from string, z *ooxml.Package) (*officePackage, error) {
	if isCFB(in) {
		f, err := parseCFB(in)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", engine.ErrUnprocessable, err)
		}
		if _, ok := f.stream("EncryptionInfo"); ok {
			return nil, engine.ErrEncrypted
		}
		return nil, invalid(from, in, "it is a compound (OLE2) file without encryption")
	}
	p, err := openPackage(in, from, z)
	if err != nil {
		return nil, err
	}
	if ooxmlFormat(p.zip) != from {
		return nil, invalid(from, in, "the ZIP package has no "+ooxmlMainParts[from])
	}
	return p, nil
}

// sniffCFB accepts a compound file with the main stream of format from
// (cfbStreams), unless it is password protected.
func sniffCFB(in []byte, from string) error {
	if !isCFB(in) {
		return invalid(from, in, "it is not a compound (OLE2) file")
	}
	f, err := parseCFB(in)
	if err != nil {
		return fmt.Errorf("%w: %v", engine.ErrUnprocessable, err)
	}
	if _, ok := f.stream("EncryptionInfo"); ok {
		return engine.ErrEncrypted
	}
	if cfbFormat(f) != from {
		return invalid(from, in, "the compound file has no "+strings.Join(cfbStreams[from], " or ")+" stream")
	}
	if cfbEncrypted(f, from) {
		return engine.ErrEncrypted
	}
	return nil
}

// cfbEncrypted reports whether the legacy document in f says it is
// encrypted, where its first bytes say so.
func cfbEncrypted(f *cfbFile, from string) bool {
	switch from {
	case engine.FromDOC:
		// FibBase ([MS-DOC] 2.5.2): wIdent 0xA5EC, then flags at offset
		// 10, where bit 8 is fEncrypted.
		wd, _ := f.stream("WordDocument")
		fib, ok := f.head(wd, 12)
		return ok && binary.LittleEndian.Uint16(fib) == 0xA5EC && binary.LittleEndian.Uint16(fib[10:])&0x0100 != 0
	case engine.FromXLS:
		// An encrypted workbook's first record after BOF is FilePass
		// (0x002F) ([MS-XLS] 2.4.117); a record is type, size, data.
		for _, name := range cfbStreams[engine.FromXLS] {
			if wb, ok := f.stream(name); ok {
				head, ok := f.head(wb, 4)
				if !ok {
					return false
				}
				next, ok := f.head(wb, 4+int(binary.LittleEndian.Uint16(head[2:]))+2)
				return ok && binary.LittleEndian.Uint16(next[len(next)-2:]) == 0x002F
			}
		}
	case engine.FromPPT:
		_, ok := f.stream("EncryptedSummary") // [MS-PPT] 2.1.3
		return ok
	}
	return false
}

// sniffODF accepts an OpenDocument package of format from; a manifest
// with encryption data means the package is password protected.
func sniffODF(in []byte, from string, z *ooxml.Package) (*officePackage, error) {
	p, err := openPackage(in, from, z)
	if err != nil {
		return nil, err
	}
	if odfFormat(p.zip) != from {
		return nil, invalid(from, in, "its mimetype entry is not "+odfMimeTypes[from])
	}
	if bytes.Contains(p.zip.Head("META-INF/manifest.xml", 1<<20), []byte("encryption-data")) {
		return nil, engine.ErrEncrypted
	}
	return p, nil
}

// invalid builds the ErrInvalidFormat error for input declared as from,
// naming what the input looks like instead.
func invalid(from string, in []byte, why string) error {
	return fmt.Errorf("%w: declared %s, but %s (it looks like %s)", engine.ErrInvalidFormat, from, why, describe(in))
}

// describe names what in looks like, for error messages.
func describe(in []byte) string {
	text := trimText(in)
	switch {
	case len(in) == 0:
		return "an empty file"
	case bytes.HasPrefix(in, []byte("%PDF-")):
		return "a PDF file"
	case formatNames[contentFormat(in)] != "":
		return formatNames[contentFormat(in)]
	case bytes.HasPrefix(in, []byte("PK\x03\x04")):
		return "a ZIP archive"
	case isCFB(in):
		return "a compound (OLE2) file"
	case bytes.HasPrefix(text, []byte(`{\rtf`)):
		return "an RTF document"
	case bytes.HasPrefix(in, []byte("\x89PNG")), bytes.HasPrefix(in, []byte("\xff\xd8\xff")), bytes.HasPrefix(in, []byte("GIF8")):
		return "an image"
	case !isBinary(in) && bytes.HasPrefix(text, []byte("<")):
		return "HTML or XML"
	case !isBinary(in):
		return "plain text"
	}
	return "binary data"
}

// contentFormat is the format that in's content tells, or "".
func contentFormat(in []byte) string {
	f, _ := detectContent(in)
	return f
}

// trimText drops a UTF-8 byte order mark and leading white space.
func trimText(in []byte) []byte {
	return bytes.TrimLeft(bytes.TrimPrefix(in, []byte("\xef\xbb\xbf")), " \t\r\n\f")
}

// isBinary reports whether in has a NUL byte in its first 8 KiB, the
// usual test for "not text".
func isBinary(in []byte) bool {
	return bytes.IndexByte(in[:min(len(in), 8192)], 0) >= 0
}
