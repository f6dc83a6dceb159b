package pdf

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"sync"
)

// decodeStream undoes the stream's filters. Only FlateDecode (with PNG
// predictors) is supported: it is the only filter that cross-reference and
// object streams use in practice, and those are the only streams this
// package needs to read. Output is capped at max bytes against zip bombs;
// an unfiltered stream counts too, so that a caller's budget covers every
// stream it reads, whatever its filters. produced counts the bytes that
// the filters put out, also when decoding fails, for a caller's budget.
func decodeStream(d Dict, raw []byte, max int64) (out []byte, produced int64, err error) {
	filters, parms := filterList(d)
	if len(filters) == 0 && int64(len(raw)) > max {
		return nil, 0, fmt.Errorf("pdf: stream of %d bytes exceeds the %d bytes left to decode", len(raw), max)
	}
	out = raw
	for i, f := range filters {
		if f != "FlateDecode" && f != "Fl" {
			return nil, produced, fmt.Errorf("pdf: unsupported stream filter /%s", f)
		}
		var n int64
		out, n, err = inflate(out, max)
		produced += n
		if err != nil {
			return nil, produced, err
		}
		if i < len(parms) {
			if out, err = unpredict(out, parms[i]); err != nil {
				return nil, produced, err
			}
		}
	}
	if len(filters) == 0 {
		produced = int64(len(out))
	}
	return out, produced, nil
}

// filterList returns the /Filter names and their /DecodeParms dictionaries.
func filterList(d Dict) ([]Name, []Dict) {
	var names []Name
	var parms []Dict
	switch f := d["Filter"].(type) {
	case Name:
		names = []Name{f}
	case Array:
		for _, e := range f {
			if n, ok := e.(Name); ok {
				names = append(names, n)
			}
		}
	}
	switch p := d["DecodeParms"].(type) {
	case Dict:
		parms = []Dict{p}
	case Array:
		for _, e := range p {
			pd, _ := e.(Dict)
			parms = append(parms, pd)
		}
	}
	return names, parms
}

// zlibWriters keeps compressors between updates: making one costs more
// than compressing a page's content.
var zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

// Deflate compresses data with zlib, for a stream with /FlateDecode.
func Deflate(data []byte) []byte {
	var b bytes.Buffer
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	zw.Reset(&b)
	zw.Write(data) // writes to a bytes.Buffer cannot fail
	zw.Close()
	return b.Bytes()
}

// inflate decompresses zlib data. A truncated stream or a bad checksum is
// tolerated (many writers produce them), as long as some data came out.
// The data is inflated twice: once to count its size, into nothing, and
// once into a buffer of that size. A bomb thus costs time up to max but no
// memory, and a real stream no more than its size (growing a buffer as
// the data comes would allocate about twice that). produced counts the
// bytes inflated, also on failure, for a caller's budget.
func inflate(in []byte, max int64) (out []byte, produced int64, err error) {
	n, err := inflateInto(io.Discard, in, max)
	if err != nil {
		return nil, n, err
	}
	zr, err := zlib.NewReader(bytes.NewReader(in))
	if err != nil {
		return nil, n, fmt.Errorf("pdf: flate stream: %w", err)
	}
	out = make([]byte, n)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, n, fmt.Errorf("pdf: flate stream: %w", err)
	}
	return out, n, nil
}

// InflatedSize counts the bytes zlib data inflates to, up to max,
// without holding them: a truncated stream or a bad checksum is
// tolerated as by the reader; more than max, or data that is not zlib's,
// is an error.
func InflatedSize(in []byte, max int64) (int64, error) { return inflateInto(io.Discard, in, max) }

// inflateInto writes the inflated data to w, up to max bytes, and returns
// how many bytes it inflated.
func inflateInto(w io.Writer, in []byte, max int64) (int64, error) {
	zr, err := zlib.NewReader(bytes.NewReader(in))
	if err != nil {
		return 0, fmt.Errorf("pdf: flate stream: %w", err)
	}
	n, err := io.Copy(w, io.LimitReader(zr, max+1))
	if n > max {
		return n, fmt.Errorf("pdf: flate stream expands beyond %d bytes", max)
	}
	if err != nil && !(n > 0 && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, zlib.ErrChecksum))) {
		return n, fmt.Errorf("pdf: flate stream: %w", err)
	}
	return n, nil
}

// unpredict reverses a PNG predictor (Predictor >= 10), as used by
// cross-reference streams. TIFF predictor 2 is not supported. Data shorter
// than one row (a filter byte and rowLen bytes) is refused before anything
// is allocated, so /Columns cannot size a buffer larger than the input;
// empty data stays empty. A partial row at the end is dropped.
func unpredict(in []byte, parms Dict) ([]byte, error) {
	pred, _ := parms["Predictor"].(Int)
	if pred <= 1 {
		return in, nil
	}
	if pred < 10 {
		return nil, fmt.Errorf("pdf: unsupported predictor %d", pred)
	}
	cols := IntOr(parms["Columns"], 1)
	colors := IntOr(parms["Colors"], 1)
	bpc := IntOr(parms["BitsPerComponent"], 8)
	if cols < 1 || cols > 1<<20 || colors < 1 || colors > 32 || bpc < 1 || bpc > 16 {
		return nil, errors.New("pdf: predictor parameters out of range")
	}
	if len(in) == 0 {
		return in, nil
	}
	bpp := (colors*bpc + 7) / 8
	rowLen := (cols*colors*bpc + 7) / 8
	if len(in) < rowLen+1 {
		return nil, fmt.Errorf("pdf: %d bytes of predicted data, less than one row of %d", len(in), rowLen+1)
	}
	out := make([]byte, 0, len(in))
	prev := make([]byte, rowLen)
	for len(in) >= rowLen+1 {
		ft, row := in[0], append([]byte(nil), in[1:rowLen+1]...)
		in = in[rowLen+1:]
		for i := range row {
			var left, up, ul byte
			if i >= bpp {
				left, ul = row[i-bpp], prev[i-bpp]
			}
			up = prev[i]
			switch ft {
			case 0:
			case 1:
				row[i] += left
			case 2:
				row[i] += up
			case 3:
				row[i] += byte((int(left) + int(up)) / 2)
			case 4:
				row[i] += paeth(left, up, ul)
			default:
				return nil, fmt.Errorf("pdf: invalid PNG filter type %d", ft)
			}
		}
		out = append(out, row...)
		prev = row
	}
	return out, nil
}

func paeth(a, b, c byte) byte {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := abs(p-int(a)), abs(p-int(b)), abs(p-int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// IntOr returns o as an int, or def when o is not an integer.
func IntOr(o Object, def int) int {
	if v, ok := o.(Int); ok && v >= -1<<31 && v <= 1<<31 {
		return int(v)
	}
	return def
}
