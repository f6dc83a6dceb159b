package pdf

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxNesting bounds array/dictionary nesting so hostile input cannot
// exhaust the stack.
const MaxNesting = 64

// parser reads PDF objects from data starting at pos. It never reads past
// the end of data and reports malformed syntax as errors, not panics.
type parser struct {
	data []byte
	pos  int
}

func (p *parser) errorf(format string, a ...any) error {
	return fmt.Errorf("pdf: offset %d: "+format, append([]any{p.pos}, a...)...)
}

// skipSpace skips white space and comments.
func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case isSpace(c):
			p.pos++
		case c == '%':
			for p.pos < len(p.data) && p.data[p.pos] != '\n' && p.data[p.pos] != '\r' {
				p.pos++
			}
		default:
			return
		}
	}
}

// maxToken bounds the length of a keyword or number. Real ones are short;
// the bound keeps scans linear when hostile input has long runs of
// regular characters that many offsets point into.
const maxToken = 256

// keyword reads a run of regular characters: a keyword or a number.
func (p *parser) keyword() string {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.data) && p.pos-start < maxToken && !isSpace(p.data[p.pos]) && !isDelimiter(p.data[p.pos]) {
		p.pos++
	}
	return string(p.data[start:p.pos])
}

// expect consumes the keyword kw or fails.
func (p *parser) expect(kw string) error {
	save := p.pos
	if got := p.keyword(); got != kw {
		p.pos = save
		return p.errorf("expected %q, found %.20q", kw, got)
	}
	return nil
}

// integer reads a non-negative decimal integer.
func (p *parser) integer() (int64, error) {
	save := p.pos
	kw := p.keyword()
	n, err := strconv.ParseInt(kw, 10, 64)
	if err != nil || n < 0 {
		p.pos = save
		return 0, p.errorf("expected a non-negative integer, found %.20q", kw)
	}
	return n, nil
}

// object parses one direct object (a reference "n g R" counts as one).
func (p *parser) object(depth int) (Object, error) {
	if depth > MaxNesting {
		return nil, p.errorf("objects nested deeper than %d", MaxNesting)
	}
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of data")
	}
	switch c := p.data[p.pos]; {
	case c == '/':
		return p.name()
	case c == '(':
		return p.literal()
	case c == '<' && p.pos+1 < len(p.data) && p.data[p.pos+1] == '<':
		return p.dict(depth)
	case c == '<':
		return p.hexString()
	case c == '[':
		return p.array(depth)
	case c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	}
	switch kw := p.keyword(); kw {
	case "true":
		return Bool(true), nil
	case "false":
		return Bool(false), nil
	case "null":
		return Null{}, nil
	case "":
		return nil, p.errorf("unexpected delimiter %q", p.data[p.pos])
	default:
		return nil, p.errorf("unexpected keyword %.20q", kw)
	}
}

// number parses an integer, a real, or a reference "n g R".
func (p *parser) number() (Object, error) {
	kw := p.keyword()
	if n, err := strconv.ParseInt(kw, 10, 64); err == nil {
		if ref, ok := p.refAfter(n); ok {
			return ref, nil
		}
		return Int(n), nil
	}
	// ParseFloat also takes "Inf" and "NaN", which are no PDF numbers and
	// could not be written out again.
	f, err := strconv.ParseFloat(kw, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, p.errorf("malformed number %.20q", kw)
	}
	return Real(f), nil
}

// refAfter tries to read "g R" after the integer n, restoring the position
// when the input is not a reference.
func (p *parser) refAfter(n int64) (Ref, bool) {
	save := p.pos
	gen, err := p.integer()
	if err == nil && p.keyword() == "R" && n <= 1<<31 && gen <= 65535 {
		return Ref{Num: int(n), Gen: int(gen)}, true
	}
	p.pos = save
	return Ref{}, false
}

// commonNames are names that objects repeat: parsing one of them takes it
// from here instead of allocating it anew, which matters for files made
// of many small dictionaries.
var commonNames = func() map[string]Name {
	m := map[string]Name{}
	for _, n := range strings.Fields(`Type Page Pages Parent Kids Count MediaBox CropBox Rotate Resources Contents
		Font XObject ProcSet ExtGState ColorSpace Pattern Shading Length Filter FlateDecode DecodeParms Subtype
		Annots Rect Border P F AP N BBox Matrix Width Height BitsPerComponent Image Form Widths FirstChar LastChar
		BaseFont Encoding FontDescriptor Root Size Info ID Prev XRef ObjStm First W Index T V FT Ff Fields`) {
		m[n] = Name(n)
	}
	return m
}()

func (p *parser) name() (Object, error) {
	p.pos++ // '/'
	start := p.pos
	for p.pos < len(p.data) && !isSpace(p.data[p.pos]) && !isDelimiter(p.data[p.pos]) && p.data[p.pos] != '#' {
		p.pos++
	}
	if p.pos == len(p.data) || p.data[p.pos] != '#' {
		if n, ok := commonNames[string(p.data[start:p.pos])]; ok {
			return n, nil
		}
		return Name(p.data[start:p.pos]), nil
	}
	b := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) && !isSpace(p.data[p.pos]) && !isDelimiter(p.data[p.pos]) {
		c := p.data[p.pos]
		if c == '#' && p.pos+2 < len(p.data) {
			if v, err := strconv.ParseUint(string(p.data[p.pos+1:p.pos+3]), 16, 8); err == nil {
				b = append(b, byte(v))
				p.pos += 3
				continue
			}
		}
		b = append(b, c)
		p.pos++
	}
	return Name(b), nil
}

func (p *parser) literal() (Object, error) {
	p.pos++ // '('
	var b []byte
	depth := 1
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		p.pos++
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return String(b), nil
			}
		case '\\':
			b = p.escape(b)
			continue
		}
		b = append(b, c)
	}
	return nil, p.errorf("unterminated string")
}

// escape decodes the escape sequence after a backslash in a literal string.
func (p *parser) escape(b []byte) []byte {
	if p.pos >= len(p.data) {
		return b
	}
	c := p.data[p.pos]
	p.pos++
	switch c {
	case 'n':
		return append(b, '\n')
	case 'r':
		return append(b, '\r')
	case 't':
		return append(b, '\t')
	case 'b':
		return append(b, '\b')
	case 'f':
		return append(b, '\f')
	case '\r':
		if p.pos < len(p.data) && p.data[p.pos] == '\n' {
			p.pos++
		}
		return b
	case '\n':
		return b
	}
	if c >= '0' && c <= '7' {
		v := int(c - '0')
		for i := 0; i < 2 && p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '7'; i++ {
			v = v*8 + int(p.data[p.pos]-'0')
			p.pos++
		}
		return append(b, byte(v))
	}
	return append(b, c)
}

func (p *parser) hexString() (Object, error) {
	p.pos++ // '<'
	end := bytes.IndexByte(p.data[p.pos:], '>')
	if end < 0 {
		return nil, p.errorf("unterminated hex string")
	}
	raw := p.data[p.pos : p.pos+end]
	p.pos += end + 1
	out := make([]byte, 0, len(raw)/2+1)
	var hi byte
	half := false
	for _, c := range raw {
		if isSpace(c) {
			continue
		}
		v, ok := HexDigit(c)
		if !ok {
			return nil, p.errorf("invalid character %q in hex string", c)
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		out = append(out, hi<<4)
	}
	return HexString(out), nil
}

func (p *parser) array(depth int) (Object, error) {
	p.pos++ // '['
	a := Array{}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unterminated array")
		}
		if p.data[p.pos] == ']' {
			p.pos++
			return a, nil
		}
		o, err := p.object(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, o)
	}
}

func (p *parser) dict(depth int) (Object, error) {
	p.pos += 2 // '<<'
	d := Dict{}
	for {
		p.skipSpace()
		if p.pos+1 < len(p.data) && p.data[p.pos] == '>' && p.data[p.pos+1] == '>' {
			p.pos += 2
			return d, nil
		}
		if p.pos >= len(p.data) || p.data[p.pos] != '/' {
			return nil, p.errorf("expected a name as dictionary key")
		}
		k, _ := p.name()
		v, err := p.object(depth + 1)
		if err != nil {
			return nil, err
		}
		if _, isNull := v.(Null); !isNull {
			d[k.(Name)] = v
		}
	}
}

// objectHeader reads "num gen obj" at pos.
func (p *parser) objectHeader() (num, gen int, err error) {
	n, err := p.integer()
	if err != nil {
		return 0, 0, err
	}
	g, err := p.integer()
	if err != nil {
		return 0, 0, err
	}
	if err := p.expect("obj"); err != nil {
		return 0, 0, err
	}
	if n > 1<<31 || g > 65535 {
		return 0, 0, p.errorf("object number %d %d out of range", n, g)
	}
	return int(n), int(g), nil
}

// streamStart checks for the "stream" keyword after a dictionary and
// returns the offset where the stream data begins (after its end of line).
func (p *parser) streamStart() (int, bool) {
	save := p.pos
	if p.keyword() != "stream" {
		p.pos = save
		return 0, false
	}
	if p.pos < len(p.data) && p.data[p.pos] == '\r' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
	}
	return p.pos, true
}

// HexDigit returns the value of the hexadecimal digit c.
func HexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
