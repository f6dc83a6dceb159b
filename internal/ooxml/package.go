// Package ooxml reads and rewrites Office Open XML packages (DOCX) that
// come from untrusted clients: ZIP entries are decompressed within explicit
// limits, whatever their headers declare, XML parts are parsed within
// limits into a tree that remembers where each element lies in the part, so
// edits are spliced into the original bytes, and a rewritten package copies
// every untouched entry byte for byte.
package ooxml

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path"
	"strings"
)

var (
	// ErrNotPackage reports input that is not a readable ZIP archive.
	ErrNotPackage = errors.New("ooxml: not a ZIP package")
	// ErrTooLarge reports a package beyond its Limits.
	ErrTooLarge = errors.New("ooxml: package exceeds limits")
)

// Limits bound what reading a package may cost. Zero means no limit.
type Limits struct {
	MaxEntries  int   // entries in the ZIP directory
	MaxPartSize int64 // decompressed bytes of one part read
	// MaxTotalSize bounds the decompressed bytes the entries declare, and
	// the bytes actually decompressed by all reads of one Package.
	MaxTotalSize int64
}

// Package is an opened ZIP package. It is not safe for concurrent use.
type Package struct {
	zr     *zip.Reader
	files  map[string]*zip.File // first entry of each name
	limits Limits
	read   int64 // bytes decompressed so far
}

// Open reads the ZIP directory of b. Entry names are only used as keys,
// never as file system paths, so names like "../x" are harmless here.
func Open(b []byte, l Limits) (*Package, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: %w", ErrNotPackage, err)
	}
	if l.MaxEntries > 0 && len(zr.File) > l.MaxEntries {
		return nil, fmt.Errorf("%w: %d entries, at most %d allowed", ErrTooLarge, len(zr.File), l.MaxEntries)
	}
	p := &Package{zr: zr, files: make(map[string]*zip.File, len(zr.File)), limits: l}
	var declared uint64
	for _, f := range zr.File {
		declared += f.UncompressedSize64
		if _, dup := p.files[f.Name]; !dup {
			p.files[f.Name] = f
		}
	}
	if l.MaxTotalSize > 0 && declared > uint64(l.MaxTotalSize) {
		return nil, fmt.Errorf("%w: the entries declare %d bytes, at most %d allowed", ErrTooLarge, declared, l.MaxTotalSize)
	}
	return p, nil
}

// Has reports whether the package has a part of that name.
func (p *Package) Has(name string) bool { return p.files[name] != nil }

// Names lists the entries in directory order.
func (p *Package) Names() []string {
	names := make([]string, len(p.zr.File))
	for i, f := range p.zr.File {
		names[i] = f.Name
	}
	return names
}

// Files lists the entries in directory order, for a caller that reads
// every one of them its own way (a measure of what the package expands
// to, say).
func (p *Package) Files() []*zip.File { return p.zr.File }

// Head returns at most n decompressed bytes of the part name, outside the
// package's limits (n bounds them), or nil when the package has no such
// part or it cannot be read whole up to n: a peek at a part that tells
// what the package is.
func (p *Package) Head(name string, n int64) []byte {
	f := p.files[name]
	if f == nil {
		return nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, n))
	if err != nil {
		return nil
	}
	return data
}

// modified returns the time stamp of an entry, for new parts that should
// look like their neighbours; zero when there is no such entry.
func (p *Package) modified(name string) (date, time uint16) {
	if f := p.files[name]; f != nil {
		return f.ModifiedDate, f.ModifiedTime
	}
	return 0, 0
}

// Read returns the decompressed part, or nil when the package has no such
// part. Errors wrap ErrTooLarge when a limit is crossed: the limits are
// checked against the declared size and again while inflating, since the
// declared size may lie.
func (p *Package) Read(name string) ([]byte, error) {
	f := p.files[name]
	if f == nil {
		return nil, nil
	}
	limit := p.remaining()
	if f.UncompressedSize64 > uint64(limit) {
		return nil, p.tooLarge(name, fmt.Sprintf("declares %d bytes", f.UncompressedSize64))
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("ooxml: opening %s: %w", name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	p.read += int64(len(data))
	if err != nil {
		return nil, fmt.Errorf("ooxml: reading %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, p.tooLarge(name, "inflates past the limit")
	}
	return data, nil
}

// remaining is the most the next read may inflate.
func (p *Package) remaining() int64 {
	limit := int64(1 << 62) // no limit, with room for the +1 that detects overflow
	if p.limits.MaxPartSize > 0 {
		limit = p.limits.MaxPartSize
	}
	if p.limits.MaxTotalSize > 0 {
		limit = min(limit, max(p.limits.MaxTotalSize-p.read, 0))
	}
	return limit
}

func (p *Package) tooLarge(name, what string) error {
	return fmt.Errorf("%w: %s %s (at most %d bytes per part and %d in all allowed)",
		ErrTooLarge, name, what, p.limits.MaxPartSize, p.limits.MaxTotalSize)
}

// Edits are new contents of parts: replacements of existing entries, and
// new parts appended in the order added.
type Edits struct {
	parts map[string][]byte
	added []string
	// Uncompressed writes the edited and new parts stored, not deflated:
	// for a package read once, right away, by a converter.
	Uncompressed bool
}

// Set replaces the part name, or adds it when the package has no such part.
func (e *Edits) Set(p *Package, name string, data []byte) {
	if e.parts == nil {
		e.parts = map[string][]byte{}
	}
	if _, seen := e.parts[name]; !seen && !p.Has(name) {
		e.added = append(e.added, name)
	}
	e.parts[name] = data
}

// Get returns the edited content of name, if it was set.
func (e *Edits) Get(name string) ([]byte, bool) {
	data, ok := e.parts[name]
	return data, ok
}

// Empty reports whether nothing was set.
func (e *Edits) Empty() bool { return len(e.parts) == 0 }

// Rewrite writes the package with the edits applied. Untouched entries are
// copied raw, so their bytes (compressed data, CRC, times) stay identical;
// new parts take the time stamp of the entry stampFrom (the main document
// part, say). Entries whose names are not clean relative paths (CleanName)
// are dropped: no part of a valid package has such a name, and whatever
// unpacks the output next must not be handed one.
func (p *Package) Rewrite(e *Edits, stampFrom string) ([]byte, error) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range p.zr.File {
		if !CleanName(f.Name) {
			continue
		}
		var err error
		if data, ok := e.parts[f.Name]; ok && p.files[f.Name] == f {
			err = writeEntry(w, editedHeader(f, e.Uncompressed), data)
		} else {
			err = w.Copy(f)
		}
		if err != nil {
			return nil, fmt.Errorf("ooxml: writing %s: %w", f.Name, err)
		}
	}
	date, tm := p.modified(stampFrom)
	for _, name := range e.added {
		if !CleanName(name) {
			return nil, fmt.Errorf("ooxml: refusing to write the part %q: not a clean relative path", name)
		}
		h := &zip.FileHeader{Name: name, Method: methodFor(name, e.Uncompressed), ModifiedDate: date, ModifiedTime: tm}
		if err := writeEntry(w, h, e.parts[name]); err != nil {
			return nil, fmt.Errorf("ooxml: writing %s: %w", name, err)
		}
	}
	if err := w.SetComment(p.zr.Comment); err != nil {
		return nil, fmt.Errorf("ooxml: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("ooxml: %w", err)
	}
	return buf.Bytes(), nil
}

// CleanName reports whether name, a ZIP entry's, is a clean relative path
// that unpacks inside the directory it is unpacked in on any system: not
// empty, not absolute, no "." or ".." segment, no empty segment, no
// backslash, colon (drive letters, alternate streams) or control
// character. A directory entry's one trailing slash is allowed.
func CleanName(name string) bool {
	name = strings.TrimSuffix(name, "/")
	if name == "" || name == "." || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") || strings.HasPrefix(name, "/") {
		return false
	}
	return !strings.ContainsFunc(name, func(r rune) bool { return r == '\\' || r == ':' || r < 0x20 || r == 0x7f })
}

// methodFor is how a new part is written: images that are compressed
// already are stored, the rest deflated unless uncompressed.
func methodFor(name string, uncompressed bool) uint16 {
	if uncompressed {
		return zip.Store
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".png", ".jpeg", ".jpg", ".gif":
		return zip.Store
	}
	return zip.Deflate
}

// editedHeader keeps what describes an entry (name, times, attributes) and
// drops what describes its old data (sizes, CRC, extra fields).
func editedHeader(f *zip.File, uncompressed bool) *zip.FileHeader {
	method := zip.Deflate
	if f.Method == zip.Store || uncompressed {
		method = zip.Store
	}
	return &zip.FileHeader{
		Name:           f.Name,
		Comment:        f.Comment,
		NonUTF8:        f.NonUTF8,
		Method:         method,
		ModifiedDate:   f.ModifiedDate,
		ModifiedTime:   f.ModifiedTime,
		CreatorVersion: f.CreatorVersion,
		ExternalAttrs:  f.ExternalAttrs,
	}
}

// writeEntry writes data as the entry h. A stored entry carries its CRC
// and sizes in its local header rather than in a data descriptor after the
// data (what zip.Writer.CreateHeader writes): LibreOffice 25.2 takes a
// stored entry followed by a descriptor for a damaged package and waits on
// its repair for the whole job timeout.
func writeEntry(w *zip.Writer, h *zip.FileHeader, data []byte) error {
	create := w.CreateHeader
	if h.Method == zip.Store {
		h.CRC32 = crc32.ChecksumIEEE(data)
		h.CompressedSize64, h.UncompressedSize64 = uint64(len(data)), uint64(len(data))
		create = w.CreateRaw
	}
	fw, err := create(h)
	if err != nil {
		return err
	}
	_, err = fw.Write(data)
	return err
}
