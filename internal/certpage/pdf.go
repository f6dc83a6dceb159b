package certpage

import (
	"bytes"
	"compress/zlib"
	"math"
	"strconv"
	"sync"
)

// zlibWriters keeps compressors between renders: allocating one costs more
// than a small certificate's whole layout.
var zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

// compress zlib-compresses data: font files, CMaps, and image samples, which
// are compressed once when decoded rather than kept whole until the pages
// are handed over.
func compress(data []byte) []byte {
	var b bytes.Buffer
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	zw.Reset(&b)
	zw.Write(data) // writes to a bytes.Buffer cannot fail
	zw.Close()
	return b.Bytes()
}

// appendNum appends a number in PDF syntax: rounded to three decimals, no
// exponent, no trailing zeros.
func appendNum(b []byte, v float64) []byte {
	v = roundNum(v)
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

// roundNum rounds v to the three decimals that numbers are written with.
func roundNum(v float64) float64 { return math.Round(v*1000) / 1000 }
