package safeinput

import (
	"encoding/binary"
	"errors"
	"unicode/utf16"
)

// A Compound File Binary (CFB, "OLE2") container is the envelope of legacy
// .doc files and of password-protected OOXML files (which hold the
// encrypted package in an "EncryptedPackage" stream described by
// "EncryptionInfo"). Sniffing only needs the names of its streams and the
// first bytes of one stream, so this reads the directory and nothing more.
// Layout: [MS-CFB] sections 2.2 (header), 2.3 (FAT), 2.6 (directory).

var cfbSignature = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

const (
	cfbEndOfChain  = 0xFFFFFFFE
	cfbMaxRegSect  = 0xFFFFFFFA
	cfbHeaderDIFAT = 109
	cfbDirEntry    = 128
)

var errCFB = errors.New("damaged compound file (OLE2) container")

// cfbEntry is one directory entry: a storage or a stream.
type cfbEntry struct {
	name  string
	kind  byte // 1 storage, 2 stream, 5 root
	start uint32
	size  uint64
}

// cfbFile is a parsed container: its sectors, FAT and directory.
type cfbFile struct {
	data    []byte
	shift   uint
	fat     []uint32
	cutoff  uint32
	entries []cfbEntry
}

func isCFB(b []byte) bool {
	return len(b) >= 512 && string(b[:8]) == string(cfbSignature)
}

// parseCFB reads the header, the FAT and the directory of b.
func parseCFB(b []byte) (*cfbFile, error) {
	if !isCFB(b) {
		return nil, errCFB
	}
	le := binary.LittleEndian
	f := &cfbFile{data: b, shift: uint(le.Uint16(b[0x1E:])), cutoff: le.Uint32(b[0x38:])}
	if f.shift != 9 && f.shift != 12 {
		return nil, errCFB
	}
	fatSectors, err := f.fatSectorList(le.Uint32(b[0x2C:]), le.Uint32(b[0x44:]))
	if err != nil {
		return nil, err
	}
	for _, s := range fatSectors {
		sec, err := f.sector(s)
		if err != nil {
			return nil, err
		}
		for i := 0; i+4 <= len(sec); i += 4 {
			f.fat = append(f.fat, le.Uint32(sec[i:]))
		}
	}
	return f, f.readDirectory(le.Uint32(b[0x30:]))
}

// fatSectorList returns the sectors that hold the FAT: the first 109 are
// listed in the header, the rest in a chain of DIFAT sectors.
func (f *cfbFile) fatSectorList(count, difat uint32) ([]uint32, error) {
	le := binary.LittleEndian
	maxSectors := uint32(len(f.data) >> f.shift)
	if count > maxSectors {
		return nil, errCFB
	}
	list := make([]uint32, 0, count)
	for i := 0; i < cfbHeaderDIFAT && uint32(len(list)) < count; i++ {
		list = append(list, le.Uint32(f.data[0x4C+4*i:]))
	}
	for steps := uint32(0); uint32(len(list)) < count; steps++ {
		if difat > cfbMaxRegSect || steps > maxSectors {
			return nil, errCFB
		}
		sec, err := f.sector(difat)
		if err != nil {
			return nil, err
		}
		last := len(sec) - 4
		for i := 0; i < last && uint32(len(list)) < count; i += 4 {
			list = append(list, le.Uint32(sec[i:]))
		}
		difat = le.Uint32(sec[last:])
	}
	return list, nil
}

// sector returns the bytes of sector n.
func (f *cfbFile) sector(n uint32) ([]byte, error) {
	size := 1 << f.shift
	off := (int(n) + 1) << f.shift
	if n > cfbMaxRegSect || off < 0 || off+size > len(f.data) {
		return nil, errCFB
	}
	return f.data[off : off+size], nil
}

// readDirectory follows the directory's sector chain from start.
func (f *cfbFile) readDirectory(start uint32) error {
	le := binary.LittleEndian
	for s, steps := start, 0; s != cfbEndOfChain; steps++ {
		if steps > len(f.fat) || int(s) >= len(f.fat) {
			return errCFB
		}
		sec, err := f.sector(s)
		if err != nil {
			return err
		}
		for i := 0; i+cfbDirEntry <= len(sec); i += cfbDirEntry {
			e := sec[i : i+cfbDirEntry]
			if e[0x42] == 0 { // unused entry
				continue
			}
			f.entries = append(f.entries, cfbEntry{name: utf16Name(e[:64], le.Uint16(e[0x40:])),
				kind: e[0x42], start: le.Uint32(e[0x74:]), size: le.Uint64(e[0x78:])})
		}
		s = f.fat[s]
	}
	return nil
}

// utf16Name decodes a directory entry name of n bytes, terminator included.
func utf16Name(b []byte, n uint16) string {
	if n < 2 || int(n) > len(b) {
		return ""
	}
	u := make([]uint16, 0, n/2-1)
	for i := 0; i < int(n)-2; i += 2 {
		u = append(u, binary.LittleEndian.Uint16(b[i:]))
	}
	return string(utf16.Decode(u))
}

// stream returns the entry for the stream called name, if any.
func (f *cfbFile) stream(name string) (cfbEntry, bool) {
	for _, e := range f.entries {
		if e.kind == 2 && e.name == name {
			return e, true
		}
	}
	return cfbEntry{}, false
}

// head returns up to n first bytes of stream e, when e is stored in
// regular sectors (streams under the mini-stream cutoff, 4096 bytes, are
// not: ok is false for them).
func (f *cfbFile) head(e cfbEntry, n int) (b []byte, ok bool) {
	if e.size < uint64(f.cutoff) || uint64(n) > e.size {
		return nil, false
	}
	sec, err := f.sector(e.start)
	if err != nil || n > len(sec) {
		return nil, false
	}
	return sec[:n], true
}
