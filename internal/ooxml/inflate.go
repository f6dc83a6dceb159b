package ooxml

import (
	"bufio"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// Every part of a package that quire checks is inflated before its job
// (safeinput's expansion check reads each one whole), and inflating is
// most of that check's time. The parts are inflated with
// klauspost/compress's flate, faster at the same work than the standard
// library's (bench/RESULTS.md), while archive/zip's reading, its
// checksums and the limits counted in the inflated bytes stay as they
// are. An inflater is reused with its input buffer, where archive/zip's
// own pool allocates a new buffer per part.

// inflater is a flate reader and the buffer it reads through.
type inflater struct {
	in  *bufio.Reader
	out io.ReadCloser
}

var inflaters sync.Pool

// inflate is the Deflate decompressor of an opened package's reader.
func inflate(r io.Reader) io.ReadCloser {
	f, ok := inflaters.Get().(*inflater)
	if ok {
		f.in.Reset(r)
		if f.out.(flate.Resetter).Reset(f.in, nil) != nil {
			ok = false
		}
	}
	if !ok {
		in := bufio.NewReader(r)
		f = &inflater{in: in, out: flate.NewReader(in)}
	}
	return f
}

func (f *inflater) Read(p []byte) (int, error) { return f.out.Read(p) }

// Close returns f to the pool: archive/zip closes each part's reader
// once, and reads nothing from it after.
func (f *inflater) Close() error {
	err := f.out.Close()
	f.in.Reset(nil)
	inflaters.Put(f)
	return err
}
