package conform

import (
	"bytes"
	"encoding/binary"
	"math"
	"sync"

	"github.com/quire-dev/quire/internal/pdf"
)

// The output intent of a PDF/A file that has none (Chromium's) is sRGB,
// the colour space both engines paint in. Its ICC profile (ICC.1:2001-04,
// version 2.1, which every PDF/A part accepts) is computed here from
// sRGB's definition (IEC 61966-2-1: its primaries adapted to D50 and its
// transfer curve) rather than shipped as a file: Debian has sRGB profiles
// only in packages quire does not otherwise need.
var srgbProfile = sync.OnceValue(buildSRGB)

func outputIntent() pdf.Dict {
	return pdf.Dict{
		"Type": pdf.Name("OutputIntent"), "S": pdf.Name("GTS_PDFA1"),
		"OutputConditionIdentifier": pdf.String("sRGB IEC61966-2.1"),
		"Info":                      pdf.String("sRGB IEC61966-2.1"),
		"RegistryName":              pdf.String("http://www.color.org"),
		"DestOutputProfile": &pdf.Stream{
			Dict: pdf.Dict{"N": pdf.Int(3), "Filter": pdf.Name("FlateDecode")},
			Data: pdf.Deflate(srgbProfile()),
		},
	}
}

// hasOutputIntent reports whether the catalog has a PDF/A output intent.
func hasOutputIntent(d *pdf.Document, cat pdf.Dict) bool {
	intents, err := d.Array(cat["OutputIntents"])
	if err != nil {
		return false
	}
	for _, o := range intents {
		if oi, err := d.Dict(o); err == nil && oi["S"] == pdf.Name("GTS_PDFA1") {
			return true
		}
	}
	return false
}

type iccTag struct {
	sig  string
	data []byte
}

func buildSRGB() []byte {
	desc := textDescription("sRGB IEC61966-2.1")
	curve := srgbCurve()
	tags := []iccTag{
		{"desc", desc},
		{"cprt", append([]byte("text\x00\x00\x00\x00No copyright, use freely"), 0)},
		{"wtpt", xyz(0.9642, 1.0, 0.8249)},
		{"rXYZ", xyz(0.4360747, 0.2225045, 0.0139322)},
		{"gXYZ", xyz(0.3850649, 0.7168786, 0.0971045)},
		{"bXYZ", xyz(0.1430804, 0.0606169, 0.7141733)},
		{"rTRC", curve}, {"gTRC", curve}, {"bTRC", curve},
	}
	be := binary.BigEndian
	var table, data bytes.Buffer
	binary.Write(&table, be, uint32(len(tags)))
	start := 128 + 4 + 12*len(tags)
	at := map[string]int{} // the three curves share one copy
	for _, t := range tags {
		off, seen := at[string(t.data)]
		if !seen {
			off = start + data.Len()
			at[string(t.data)] = off
			data.Write(t.data)
			for data.Len()%4 != 0 {
				data.WriteByte(0)
			}
		}
		table.WriteString(t.sig)
		binary.Write(&table, be, uint32(off))
		binary.Write(&table, be, uint32(len(t.data)))
	}
	h := make([]byte, 128)
	be.PutUint32(h[0:], uint32(start+data.Len()))
	be.PutUint32(h[8:], 0x02100000) // version 2.1
	copy(h[12:], "mntrRGB XYZ ")
	for i, v := range []uint16{2026, 11, 29} { // creation date, fixed: the profile never changes
		be.PutUint16(h[24+2*i:], v)
	}
	copy(h[36:], "acsp")
	copy(h[68:], xyz(0.9642, 1.0, 0.8249)[8:]) // the PCS illuminant, D50
	return append(append(h, table.Bytes()...), data.Bytes()...)
}

func s15(v float64) uint32 { return uint32(int32(math.Round(v * 65536))) }

func xyz(x, y, z float64) []byte {
	b := append([]byte("XYZ "), 0, 0, 0, 0)
	for _, v := range []float64{x, y, z} {
		b = binary.BigEndian.AppendUint32(b, s15(v))
	}
	return b
}

// srgbCurve tabulates sRGB's transfer function, in 1024 steps.
func srgbCurve() []byte {
	const n = 1024
	b := append([]byte("curv"), 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, n)
	for i := range n {
		v := float64(i) / (n - 1)
		if v <= 0.04045 {
			v /= 12.92
		} else {
			v = math.Pow((v+0.055)/1.055, 2.4)
		}
		b = binary.BigEndian.AppendUint16(b, uint16(math.Round(v*65535)))
	}
	return b
}

// textDescription is an ICC v2 textDescriptionType with an ASCII text
// and empty Unicode and ScriptCode parts.
func textDescription(s string) []byte {
	b := append([]byte("desc"), 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)+1))
	b = append(append(b, s...), 0)
	b = append(b, make([]byte, 4+4+2+1+67)...)
	return b
}
