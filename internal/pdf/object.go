package pdf

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Object is a PDF value. It is one of: Null, Bool, Int, Real, Name, String,
// HexString, Array, Dict, Ref or *Stream; and, in objects being added to a
// document, *Indirect or *Placeholder. The model is deliberately plain so
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

// Indirect is an object to be written as an object of its own, referred
// to where it is nested: a resource dictionary or font that several pages
// share. Like a stream, the same *Indirect nested twice is one object.
type Indirect struct {
	Object Object
}

// Placeholder is a value whose bytes are decided after the file is written,
// such as a signature's /Contents and /ByteRange: the writer puts Text as
// it is and records where, so that the caller can overwrite those bytes
// in place (with as many bytes) without searching the output.
type Placeholder struct {
	Text   []byte
	offset int
}

// Offset is where the writer put p's first byte in the saved file.
func (p *Placeholder) Offset() int { return p.offset }

// Clone returns a shallow copy of d, so a changed version of an object read
// from the file never aliases the cached original.
func (d Dict) Clone() Dict {
	c := make(Dict, len(d)+2)
	for k, v := range d {
		c[k] = v
	}
	return c
}

// serializer turns objects into PDF syntax. base is the output offset of
// buf[0], so that placeholder positions come out as file offsets.
type serializer struct {
	buf  bytes.Buffer
	base int
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
			return fmt.Errorf("pdf: cannot write real number %v", float64(v))
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
	case *Placeholder:
		v.offset = s.base + s.buf.Len()
		s.buf.Write(v.Text)
	default:
		return fmt.Errorf("pdf: cannot write value of type %T", o)
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
	d := st.Dict.Clone()
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

// TextString encodes s as a PDF text string: PDFDocEncoding is a superset
// of ASCII, anything else is written as UTF-16BE with a byte-order mark.
func TextString(s string) String {
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

// TextOf is the text of a string object, literal or hexadecimal
// (DecodeText), or "" when o is not a string.
func TextOf(o Object) string {
	switch s := o.(type) {
	case String:
		return DecodeText(s)
	case HexString:
		return DecodeText(s)
	}
	return ""
}

// DecodeText decodes a PDF text string: UTF-16BE with a byte-order mark,
// or PDFDocEncoding, which is read as Latin-1 (exact for the ASCII range).
func DecodeText(s []byte) string {
	if len(s) >= 2 && s[0] == 0xFE && s[1] == 0xFF {
		var rs []rune
		for i := 2; i+1 < len(s); i += 2 {
			u := rune(s[i])<<8 | rune(s[i+1])
			if u >= 0xD800 && u < 0xDC00 && i+3 < len(s) {
				lo := rune(s[i+2])<<8 | rune(s[i+3])
				u = 0x10000 + (u-0xD800)<<10 + (lo - 0xDC00)
				i += 2
			}
			rs = append(rs, u)
		}
		return string(rs)
	}
	rs := make([]rune, len(s))
	for i, c := range s {
		rs[i] = rune(c)
	}
	return string(rs)
}
