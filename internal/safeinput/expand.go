package safeinput

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/ooxml"
)

// A ZIP package (DOCX, ODT) is inflated once before its job, to measure
// what LibreOffice would be asked to read: its parts, and the parts of
// the packages nested in it (embedded objects such as a spreadsheet in a
// DOCX, which LibreOffice opens too). The sizes its headers declare are
// not trusted: every byte is counted as it is inflated, and the reading
// stops as soon as a limit is passed, so that a bomb costs no more than
// the limit's worth of inflating. Entries that overlap, or that inflate to
// more or less than they declare, are counted as they inflate (archive/zip
// refuses the latter as damaged).
//
// The same reading refuses a part that declares a DTD (<!DOCTYPE): OOXML
// forbids DTDs and OpenDocument has no use for them, and LibreOffice 25.2
// resolves an external one (SYSTEM "http://...") by waiting until the
// job's time limit kills the worker. Every XML part is scanned as it
// inflates, in the encodings packages use (UTF-8, UTF-16); SVG images are
// left to packages.go, which takes their DOCTYPE out.

const (
	// maxNesting bounds how deep packages may nest in a document: a
	// document may hold packages that hold packages, no deeper.
	maxNesting = 2
	// ratioFloor: parts smaller than this are exempt from the compression
	// ratio limit (small XML parts compress well and harm no one).
	ratioFloor = 1 << 20
)

// expansion is the budget of one document's check.
type expansion struct {
	left      int64   // bytes the document may still inflate to
	limit     int64   // the whole budget, for messages
	maxRatio  float64 // <= 0: no limit
	maxNested int64   // largest nested package, which is read into memory
	pkg       *officePackage
	buf       []byte // copies every part, where io.Copy would allocate a buffer for each
}

// check returns nil when the package inflates within l and
// declares no DTD, and otherwise an error matching ErrMemoryLimit (too
// large) or ErrUnprocessable (damaged, too compressed, nested too deep, a
// DTD). It keeps the parts that clean may rewrite as it inflates them,
// and notes entry names that are not clean.
func (p *officePackage) check(l Limits) error {
	e := &expansion{left: l.MaxExpandedBytes, limit: l.MaxExpandedBytes, maxRatio: float64(l.MaxCompressionRatio), maxNested: l.MaxInputBytes, pkg: p, buf: make([]byte, 32<<10)}
	if e.left < 0 {
		e.left = 1<<63 - 1
	}
	p.comments = p.from == engine.FromDOCX && !p.keepComments && hasComments(p.zip.Head(documentRels, maxCommentPartBytes))
	return e.archive(p.zip, "", 0)
}

// archive checks the package z, found at path in the document ("" for
// the document itself), depth packages deep.
func (e *expansion) archive(z *ooxml.Package, path string, depth int) error {
	for _, f := range z.Files() {
		if depth == 0 && !ooxml.CleanName(f.Name) {
			e.pkg.unclean = true
		}
		if err := e.part(f, path, depth); err != nil {
			return err
		}
	}
	return nil
}

// part inflates the entry f of a package, counting its bytes, and checks
// it as a package of its own if it is one.
func (e *expansion) part(f *zip.File, path string, depth int) error {
	name := path + f.Name
	if f.FileInfo().IsDir() {
		return nil
	}
	r, err := f.Open()
	if err != nil {
		return fmt.Errorf("%w: its part %s cannot be read: %v", engine.ErrUnprocessable, name, err)
	}
	defer r.Close()
	head := make([]byte, 4)
	n0, err := io.ReadFull(r, head)
	head = head[:n0]
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return damagedPart(name, err)
	}
	nested := bytes.Equal(head, []byte("PK\x03\x04"))
	limit := e.left
	var sinks []io.Writer
	var buf *bytes.Buffer
	var kept *keeper
	switch {
	case nested:
		if depth+1 > maxNesting {
			return fmt.Errorf("%w: its part %s is a package nested more than %d deep", engine.ErrUnprocessable, name, maxNesting)
		}
		buf = new(bytes.Buffer)
		limit, sinks = min(limit, e.maxNested), []io.Writer{buf} // read into memory: bounded by the input limit
	default:
		if isXMLPart(f.Name, head) {
			sinks = append(sinks, &dtdScanner{})
		}
		if _, seen := e.pkg.kept[f.Name]; depth == 0 && !seen && e.pkg.rewrites(f.Name) {
			kept = &keeper{b: make([]byte, 0, min(f.UncompressedSize64, 1<<20))} // what it declares, within reason
			sinks = append(sinks, kept)
		}
	}
	dst := io.Discard
	if len(sinks) > 0 {
		dst = io.MultiWriter(sinks...)
	}
	if _, err := dst.Write(head); err != nil {
		return dtdError(name)
	}
	n, err := io.CopyBuffer(dst, io.LimitReader(r, limit-int64(n0)+1), e.buf)
	n += int64(n0)
	switch {
	case errors.Is(err, errDTD):
		return dtdError(name)
	case n > e.left:
		return fmt.Errorf("%w: it expands to more than the %d MiB allowed (QUIRE_CONVERT_MAX_EXPANDED_BYTES), reached at its part %s",
			engine.ErrMemoryLimit, e.limit>>20, name)
	case n > limit:
		return fmt.Errorf("%w: its part %s is a package of more than %d bytes, the input limit", engine.ErrUnprocessable, name, e.maxNested)
	case err != nil:
		return damagedPart(name, err)
	case e.maxRatio > 0 && n > ratioFloor && float64(n) > e.maxRatio*float64(max(1, f.CompressedSize64)):
		return fmt.Errorf("%w: its part %s is compressed %d to 1, more than the %.0f to 1 allowed (QUIRE_CONVERT_MAX_COMPRESSION_RATIO)",
			engine.ErrUnprocessable, name, n/int64(max(1, f.CompressedSize64)), e.maxRatio)
	}
	e.left -= n
	if kept != nil && !kept.over {
		e.pkg.kept[f.Name] = kept.b
	}
	if !nested {
		return nil
	}
	z, err := ooxml.Open(buf.Bytes(), ooxml.Limits{})
	if err != nil {
		return fmt.Errorf("%w: its ZIP container %s is damaged: %s", engine.ErrUnprocessable, name+"/", strings.TrimPrefix(err.Error(), ooxml.ErrNotPackage.Error()+": "))
	}
	return e.archive(z, name+"/", depth+1)
}

// keeper keeps what is written to it, up to maxCommentPartBytes: past
// that it keeps nothing (over).
type keeper struct {
	b    []byte
	over bool
}

func (k *keeper) Write(p []byte) (int, error) {
	switch {
	case k.over:
	case len(k.b)+len(p) > maxCommentPartBytes:
		k.over, k.b = true, nil
	default:
		k.b = append(k.b, p...)
	}
	return len(p), nil
}

func dtdError(name string) error {
	return fmt.Errorf("%w: its part %s declares a DTD (<!DOCTYPE), which OOXML and OpenDocument packages do not use", engine.ErrUnprocessable, name)
}

// isXMLPart reports whether the package part name, which starts with
// head, is XML to scan for a DTD: by its name, or by its start (markup,
// a byte order mark, UTF-16 markup or white space), whatever its name.
func isXMLPart(name string, head []byte) bool {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".svg"):
		return false
	case strings.HasSuffix(lower, ".xml"), strings.HasSuffix(lower, ".rels"):
		return true
	}
	for _, start := range xmlStarts {
		if bytes.HasPrefix(head, start) {
			return true
		}
	}
	return false
}

// xmlStarts are how XML can start: markup (UTF-8, or UTF-16LE without a
// byte order mark), byte order marks of UTF-8 and UTF-16, UTF-16BE
// markup, white space.
var xmlStarts = [][]byte{{'<'}, {0xef, 0xbb, 0xbf}, {0xff, 0xfe}, {0xfe, 0xff}, {0, '<'}, {' '}, {'\t'}, {'\r'}, {'\n'}}

// dtdMarks are "<!DOCTYPE" in UTF-8 (and the encodings that agree with it
// on ASCII), UTF-16LE and UTF-16BE.
var dtdMarks = [][]byte{[]byte("<!DOCTYPE"), utf16Bytes("<!DOCTYPE", false), utf16Bytes("<!DOCTYPE", true)}

func utf16Bytes(ascii string, bigEndian bool) []byte {
	var b []byte
	for _, c := range []byte(ascii) {
		if bigEndian {
			b = append(b, 0, c)
		} else {
			b = append(b, c, 0)
		}
	}
	return b
}

var errDTD = errors.New("DTD")

// dtdScanner is a writer that fails with errDTD when what is written to it
// contains one of dtdMarks, also across writes.
type dtdScanner struct{ tail []byte }

func (s *dtdScanner) Write(p []byte) (int, error) {
	const keep = 2*len("<!DOCTYPE") - 1 // the most of a mark that can end a write
	edge := append(s.tail, p[:min(len(p), keep)]...)
	for _, m := range dtdMarks {
		if bytes.Contains(edge, m) || bytes.Contains(p, m) {
			return 0, errDTD
		}
	}
	if len(p) >= keep {
		edge = p
	}
	s.tail = append(s.tail[:0:0], edge[max(0, len(edge)-keep):]...)
	return len(p), nil
}

func damagedPart(name string, err error) error {
	return fmt.Errorf("%w: its part %s is damaged: %v", engine.ErrUnprocessable, name, err)
}
