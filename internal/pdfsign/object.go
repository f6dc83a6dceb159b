package pdfsign

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Object is a PDF value. It is one of: Null, Bool, Int, Real, Name, String,
// HexString, Array, Dict, Ref, *Stream or *Indirect. The model is deliberately plain so
// that objects read from a file can be copied, changed and written back
// without any hidden state.
type Object any

// Null is the PDF null object.
type Null struct{}

// Bool is a PDF boolean.
type Bool bool

// Int is a PDF integer.
type Int int64

// Real is a PDF real number.
type Real float64

// Name is a PDF name, stored without the leading slash and unescaped.
type Name string

// String is a PDF string written in literal form: (…).
type String []byte

// HexString is a PDF string written in hexadecimal form: <…>.
type HexString []byte

// Array is a PDF array.
type Array []Object

// Dict is a PDF dictionary.
type Dict map[Name]Object

// Ref is an indirect reference "Num Gen R".
type Ref struct {
	Num int
	Gen int
}

// Stream is a PDF stream. Data is written as is, so it must already be
// encoded as the dictionary's /Filter says; /Length is set by the writer.
type Stream struct {
	Dict Dict
	Data []byte
}

// Indirect is a value written as an object of its own, referred to where
// it appears: some values must be indirect objects (a font's descriptor,
// ISO 32000-1 9.8.1), and one *Indirect used in several places is one
// object, as one *Stream is.
type Indirect struct{ Value Object }

// contentsHole is the /Contents placeholder of a signature dictionary: a hex
// string of size zero bytes, which the writer remembers the position of.
type contentsHole struct{ size int }

// byteRangeHole is the /ByteRange placeholder: a fixed-width array that is
// filled in once the final file length is known.
type byteRangeHole struct{}

// byteRangeWidth is the width of the /ByteRange placeholder, "[" and "]"
// included: room for four 10-digit numbers, which covers files up to 9 GB.
const byteRangeWidth = 1 + 4*11 + 1

// clone returns a shallow copy of d, so a changed version of an object read
// from the file never aliases the cached original.
func (d Dict) clone() Dict {
	c := make(Dict, len(d)+2)
	for k, v := range d {
		c[k] = v
	}
	return c
}

// marks records where the writer put the placeholders, as absolute offsets
// in the output file.
type marks struct {
	contentsStart, contentsEnd int // the '<' and one past the '>'
	byteRangeAt                int // the '['
}

// serializer turns objects into PDF syntax. base is the output offset of
// buf[0], so that placeholder positions come out as file offsets.
type serializer struct {
	buf  bytes.Buffer
	base int
	m    marks
}

func (s *serializer) write(o Object) error {
	switch v := o.(type) {
	case nil, Null:
		s.buf.WriteString("null")
	case Bool:
		s.buf.WriteString(strconv.FormatBool(bool(v)))
	case Int:
		s.buf.WriteString(strconv.FormatInt(int64(v), 10))
	case Real:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("pdfsign: cannot write real number %v", float64(v))
		}
		s.buf.WriteString(strconv.FormatFloat(float64(v), 'f', -1, 64))
	case Name:
		writeName(&s.buf, v)
	case String:
		writeLiteral(&s.buf, v)
	case HexString:
		s.buf.WriteByte('<')
		s.buf.WriteString(hex.EncodeToString(v))
		s.buf.WriteByte('>')
	case Ref:
		fmt.Fprintf(&s.buf, "%d %d R", v.Num, v.Gen)
	case Array:
		return s.writeArray(v)
	case Dict:
		return s.writeDict(v)
	case *Stream:
		return s.writeStream(v)
	case contentsHole:
		s.m.contentsStart = s.base + s.buf.Len()
		s.buf.WriteByte('<')
		s.buf.Write(bytes.Repeat([]byte("0"), 2*v.size))
		s.buf.WriteByte('>')
		s.m.contentsEnd = s.base + s.buf.Len()
	case byteRangeHole:
		s.m.byteRangeAt = s.base + s.buf.Len()
		s.buf.WriteByte('[')
		s.buf.Write(bytes.Repeat([]byte(" "), byteRangeWidth-2))
		s.buf.WriteByte(']')
	default:
		return fmt.Errorf("pdfsign: cannot write value of type %T", o)
	}
	return nil
}

func (s *serializer) writeArray(a Array) error {
	s.buf.WriteByte('[')
	for i, e := range a {
		if i > 0 {
			s.buf.WriteByte(' ')
		}
		if err := s.write(e); err != nil {
			return err
		}
	}
	s.buf.WriteByte(']')
	return nil
}

func (s *serializer) writeDict(d Dict) error {
	s.buf.WriteString("<<")
	for _, k := range sortedKeys(d) {
		writeName(&s.buf, k)
		s.buf.WriteByte(' ')
		if err := s.write(d[k]); err != nil {
			return err
		}
	}
	s.buf.WriteString(">>")
	return nil
}

func (s *serializer) writeStream(st *Stream) error {
	d := st.Dict.clone()
	d["Length"] = Int(len(st.Data))
	if err := s.writeDict(d); err != nil {
		return err
	}
	s.buf.WriteString("\nstream\n")
	s.buf.Write(st.Data)
	s.buf.WriteString("\nendstream")
	return nil
}

// sortedKeys gives a stable key order (Type first, as readers expect to
// see it early), so the same input always yields the same bytes.
func sortedKeys(d Dict) []Name {
	keys := make([]Name, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "Type") != (keys[j] == "Type") {
			return keys[i] == "Type"
		}
		return keys[i] < keys[j]
	})
	return keys
}

func writeName(b *bytes.Buffer, n Name) {
	b.WriteByte('/')
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c < '!' || c > '~' || c == '#' || isDelimiter(c) {
			fmt.Fprintf(b, "#%02X", c)
			continue
		}
		b.WriteByte(c)
	}
}

func writeLiteral(b *bytes.Buffer, s []byte) {
	b.WriteByte('(')
	for _, c := range s {
		switch c {
		case '(', ')', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(')')
}

func isDelimiter(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func isSpace(c byte) bool {
	switch c {
	case 0, '\t', '\n', '\f', '\r', ' ':
		return true
	}
	return false
}

// textString encodes s as a PDF text string: PDFDocEncoding is a superset
// of ASCII, anything else is written as UTF-16BE with a byte-order mark.
func textString(s string) String {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return String(s)
	}
	out := []byte{0xFE, 0xFF}
	for _, r := range s {
		if r > 0xFFFF {
			r -= 0x10000
			hi, lo := 0xD800+(r>>10), 0xDC00+(r&0x3FF)
			out = append(out, byte(hi>>8), byte(hi), byte(lo>>8), byte(lo))
			continue
		}
		out = append(out, byte(r>>8), byte(r))
	}
	return String(out)
}
