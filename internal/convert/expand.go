package convert

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
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
}

// checkExpansion returns nil when the ZIP package in inflates within o's
// limits, and otherwise an error matching ErrMemoryLimit (too large) or
// ErrUnprocessable (damaged, too compressed, nested too deep).
func checkExpansion(in []byte, o *Options) error {
	if o.MaxExpandedBytes < 0 && o.MaxCompressionRatio < 0 {
		return nil
	}
	e := &expansion{left: o.MaxExpandedBytes, limit: o.MaxExpandedBytes, maxRatio: float64(o.MaxCompressionRatio), maxNested: o.MaxInputBytes}
	if e.left < 0 {
		e.left = 1<<63 - 1
	}
	return e.archive(in, "", 0)
}

// archive checks the package data, found at path in the document ("" for
// the document itself), depth packages deep.
func (e *expansion) archive(data []byte, path string, depth int) error {
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return fmt.Errorf("%w: its ZIP container%s is damaged: %v", ErrUnprocessable, where(path), err)
	}
	for _, f := range z.File {
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
		return fmt.Errorf("%w: its part %s cannot be read: %v", ErrUnprocessable, name, err)
	}
	defer r.Close()
	head := make([]byte, 4)
	n0, err := io.ReadFull(r, head)
	head = head[:n0]
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return damagedPart(name, err)
	}
	nested := bytes.Equal(head, []byte("PK\x03\x04"))
	limit, dst := e.left, io.Discard
	var buf *bytes.Buffer
	if nested {
		if depth+1 > maxNesting {
			return fmt.Errorf("%w: its part %s is a package nested more than %d deep", ErrUnprocessable, name, maxNesting)
		}
		buf = bytes.NewBuffer(head)
		limit, dst = min(limit, e.maxNested), buf // read into memory: bounded by the input limit
	}
	n, err := io.Copy(dst, io.LimitReader(r, limit-int64(n0)+1))
	n += int64(n0)
	switch {
	case n > e.left:
		return fmt.Errorf("%w: it expands to more than the %d MiB allowed (QUIRE_CONVERT_MAX_EXPANDED_BYTES), reached at its part %s",
			ErrMemoryLimit, e.limit>>20, name)
	case n > limit:
		return fmt.Errorf("%w: its part %s is a package of more than %d bytes, the input limit", ErrUnprocessable, name, e.maxNested)
	case err != nil:
		return damagedPart(name, err)
	case e.maxRatio > 0 && n > ratioFloor && float64(n) > e.maxRatio*float64(max(1, f.CompressedSize64)):
		return fmt.Errorf("%w: its part %s is compressed %d to 1, more than the %.0f to 1 allowed (QUIRE_CONVERT_MAX_COMPRESSION_RATIO)",
			ErrUnprocessable, name, n/int64(max(1, f.CompressedSize64)), e.maxRatio)
	}
	e.left -= n
	if nested {
		return e.archive(buf.Bytes(), name+"/", depth+1)
	}
	return nil
}

func damagedPart(name string, err error) error {
	return fmt.Errorf("%w: its part %s is damaged: %v", ErrUnprocessable, name, err)
}

func where(path string) string {
	if path == "" {
		return ""
	}
	return " " + path
}
