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
	"context"
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
	zr.RegisterDecompressor(zip.Deflate, inflate)
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
	parts map[string]content
	added []string
	// Uncompressed writes the edited and new parts stored, not deflated:
	// for a package read once, right away, by a converter.
	Uncompressed bool
}

// content is a part's new content: data with edits spliced in, kept
// apart until it is written, so that a large insertion (the rows of a
// table) is never copied into a whole new part.
type content struct {
	data  []byte
	edits []Edit
}

// Set replaces the part name, or adds it when the package has no such part.
func (e *Edits) Set(p *Package, name string, data []byte) {
	e.set(p, name, content{data: data})
}

// SetSpliced is Set with data with edits applied (as Splice applies them),
// spliced only as the package is written.
func (e *Edits) SetSpliced(p *Package, name string, data []byte, edits ...Edit) {
	e.set(p, name, content{data: data, edits: edits})
}

func (e *Edits) set(p *Package, name string, c content) {
	if e.parts == nil {
		e.parts = map[string]content{}
	}
	if _, seen := e.parts[name]; !seen && !p.Has(name) {
		e.added = append(e.added, name)
	}
	e.parts[name] = c
}

// Get returns the edited content of name, if it was set.
func (e *Edits) Get(name string) ([]byte, bool) {
	c, ok := e.parts[name]
	if ok && len(c.edits) > 0 {
		return Splice(c.data, c.edits...), true
	}
	return c.data, ok
}

// Empty reports whether nothing was set.
func (e *Edits) Empty() bool { return len(e.parts) == 0 }

// size is the bytes the edited parts hold once written, for the stored
// ones, and the compressed bytes of the untouched entries: what a
// rewritten package holds, but for the deflated edits.
func (p *Package) size(e *Edits) int64 {
	var n int64
	for _, f := range p.zr.File {
		if c, ok := e.parts[f.Name]; !ok {
			n += int64(f.CompressedSize64) + int64(len(f.Name)) + 100 // headers
		} else if e.Uncompressed {
			n += c.size()
		}
	}
	for _, name := range e.added {
		if c := e.parts[name]; e.Uncompressed {
			n += c.size()
		}
	}
	return n
}

// Rewrite writes the package with the edits applied. Untouched entries are
// copied raw, so their bytes (compressed data, CRC, times) stay identical;
// new parts take the time stamp of the entry stampFrom (the main document
// part, say). Entries whose names are not clean relative paths (CleanName)
// are dropped: no part of a valid package has such a name, and whatever
// unpacks the output next must not be handed one.
func (p *Package) Rewrite(e *Edits, stampFrom string) ([]byte, error) {
	return p.RewriteContext(context.Background(), e, stampFrom)
}

// RewriteContext is Rewrite that stops with ctx's error when ctx ends:
// deflating a large edited part takes seconds.
func (p *Package) RewriteContext(ctx context.Context, e *Edits, stampFrom string) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(p.size(e))) // a stored table of 400 MB is not held twice as the buffer doubles
	w := zip.NewWriter(ctxWriter{ctx, &buf})
	copyBuf := make([]byte, copyBufferSize)
	for _, f := range p.zr.File {
		if !CleanName(f.Name) {
			continue
		}
		var err error
		if c, ok := e.parts[f.Name]; ok && p.files[f.Name] == f {
			err = writeEntry(w, editedHeader(f, e.Uncompressed), c)
		} else {
			err = copyEntry(w, f, copyBuf)
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

// descriptorFlag is the general-purpose bit of a ZIP entry followed by a
// data descriptor (its sizes and checksum after its data).
const descriptorFlag = 0x8

// StoredWithDescriptor reports whether a stored (uncompressed) entry of
// the package is followed by a data descriptor, as streaming ZIP writers
// (Go's among them) write it. LibreOffice 25.2 takes such an entry for a
// damaged package and waits on its repair for the whole job timeout;
// Rewrite writes every entry without one.
func (p *Package) StoredWithDescriptor() bool {
	for _, f := range p.zr.File {
		if f.Method == zip.Store && f.Flags&descriptorFlag != 0 {
			return true
		}
	}
	return false
}

// copyBufferSize is the size of the buffer that copies a package's
// entries, one for all of them: io.Copy would allocate one per entry.
const copyBufferSize = 32 << 10

// copyEntry copies f as it is, compressed or not, with its sizes and
// checksum (the central directory's, which readers trust anyway) in its
// local header instead of a data descriptor (see writeEntry), through buf.
func copyEntry(w *zip.Writer, f *zip.File, buf []byte) error {
	src, err := f.OpenRaw()
	if err != nil {
		return err
	}
	h := f.FileHeader
	h.Flags &^= descriptorFlag
	dst, err := w.CreateRaw(&h)
	if err != nil {
		return err
	}
	_, err = io.CopyBuffer(dst, src, buf)
	return err
}

// ctxWriter writes to w until ctx ends.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(b)
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

// writeEntry writes c as the entry h. A stored entry carries its CRC
// and sizes in its local header rather than in a data descriptor after the
// data (what zip.Writer.CreateHeader writes): LibreOffice 25.2 takes a
// stored entry followed by a descriptor for a damaged package and waits on
// its repair for the whole job timeout.
func writeEntry(w *zip.Writer, h *zip.FileHeader, c content) error {
	create := w.CreateHeader
	if h.Method == zip.Store {
		crc := crc32.NewIEEE()
		c.writeTo(crc) // a hash's Write never fails
		h.CRC32 = crc.Sum32()
		h.CompressedSize64, h.UncompressedSize64 = uint64(c.size()), uint64(c.size())
		create = w.CreateRaw
	}
	fw, err := create(h)
	if err != nil {
		return err
	}
	return c.writeTo(fw)
}

// size is the length of c's bytes with its edits applied.
func (c content) size() int64 {
	n := int64(len(c.data))
	for _, e := range c.edits {
		n += int64(len(e.With)) - (e.Span.End - e.Span.Start)
	}
	return n
}

// writeTo writes c's bytes with its edits applied, piece by piece.
func (c content) writeTo(w io.Writer) error {
	at := int64(0)
	var chunk []byte
	for _, e := range c.edits {
		if _, err := w.Write(c.data[at:e.Span.Start]); err != nil {
			return err
		}
		if chunk == nil && len(e.With) > 0 {
			chunk = make([]byte, 64<<10)
		}
		// In chunks: io.WriteString would copy the whole text first, as
		// neither zip nor flate writers take strings.
		for s := e.With; s != ""; {
			n := copy(chunk, s)
			if _, err := w.Write(chunk[:n]); err != nil {
				return err
			}
			s = s[n:]
		}
		at = e.Span.End
	}
	_, err := w.Write(c.data[at:])
	return err
}
