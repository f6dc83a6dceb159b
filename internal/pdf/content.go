package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// Box is a rectangle in default user space: lower-left x and y, upper-right
// x and y.
type Box [4]float64

// Overlaps reports whether b and o share an area (touching edges do not count).
func (b Box) Overlaps(o Box) bool {
	return b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3]
}

// Empty reports a box without area.
func (b Box) Empty() bool { return b[2] <= b[0] || b[3] <= b[1] }

// BoxOf reads a rectangle array ([x1 y1 x2 y2] in any corner order).
func (d *Document) BoxOf(o Object) (Box, bool) {
	a, err := d.Array(o)
	if err != nil || len(a) != 4 {
		return Box{}, false
	}
	var v [4]float64
	for i, e := range a {
		r, _ := d.Resolve(e)
		f, ok := number(r)
		if !ok {
			return Box{}, false
		}
		v[i] = f
	}
	return Box{min(v[0], v[2]), min(v[1], v[3]), max(v[0], v[2]), max(v[1], v[3])}, true
}

func number(o Object) (float64, bool) {
	switch v := o.(type) {
	case Int:
		return float64(v), true
	case Real:
		return float64(v), true
	}
	return 0, false
}

// Limits of PaintedBoxes: operators interpreted per page (form XObjects
// painted again count again), form XObjects nested, graphics states saved.
const (
	maxContentOps   = 1 << 20
	maxFormNesting  = 8
	maxGraphicsSave = 256
)

// errContentTooComplex: a page's content exceeds what PaintedBoxes reads.
var errContentTooComplex = errors.New("pdf: page content exceeds the operators or nesting read")

// PaintedBoxes estimates where page p's content paints text and images,
// in default user space: one box per text-showing operator (its glyphs
// taken 0.6 em wide, the font's size high), per image and per inline
// image, through form XObjects. Text in render mode 3 or 7 (invisible) is
// left out; paths and shadings are not counted. It is meant to tell
// whether an annotation drawn later covers what a signer saw, and errs
// on the side of larger boxes. Content that cannot be decoded fails.
func (d *Document) PaintedBoxes(ctx context.Context, p PageObject) ([]Box, error) {
	data, err := d.pageContent(p)
	if err != nil {
		return nil, err
	}
	res, _ := d.Dict(p.Inherited["Resources"])
	s := &contentScanner{d: d, ctx: ctx}
	err = s.run(data, res, identity, 0)
	return s.boxes, err
}

// pageContent is the decoded content of a page, its streams joined.
func (d *Document) pageContent(p PageObject) ([]byte, error) {
	c, err := d.Resolve(p.Dict["Contents"])
	if err != nil {
		return nil, err
	}
	parts := Array{c}
	if a, ok := c.(Array); ok {
		parts = a
	}
	var out bytes.Buffer
	for _, part := range parts {
		o, err := d.Resolve(part)
		if err != nil {
			return nil, err
		}
		st, ok := o.(*Stream)
		if !ok {
			continue
		}
		data, err := d.decode(st)
		if err != nil {
			return nil, err
		}
		out.Write(data)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// matrix is a PDF transformation matrix [a b c d e f].
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

// times is m followed by n.
func (m matrix) times(n matrix) matrix {
	return matrix{m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3], m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5]}
}

// box is the bounding box of the rectangle (x0,y0)-(x1,y1) mapped by m.
func (m matrix) box(x0, y0, x1, y1 float64) Box {
	b := Box{1e300, 1e300, -1e300, -1e300}
	for _, pt := range [4][2]float64{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
		x, y := m[0]*pt[0]+m[2]*pt[1]+m[4], m[1]*pt[0]+m[3]*pt[1]+m[5]
		b = Box{min(b[0], x), min(b[1], y), max(b[2], x), max(b[3], y)}
	}
	return b
}

// contentScanner follows the graphics and text state of a content stream
// far enough to place what it paints.
type contentScanner struct {
	d     *Document
	ctx   context.Context
	ops   int
	boxes []Box
}

// textState is the part of the text state that places glyphs.
type textState struct {
	tm, tlm                    matrix
	size, charSpace, wordSpace float64
	scale, leading, rise       float64
	mode                       int
	wide                       bool // the font takes two bytes per glyph (Type0)
}

func (s *contentScanner) run(data []byte, res Dict, ctm matrix, depth int) error {
	p := &parser{data: data, maxDepth: s.d.lim.MaxNesting}
	var stack []matrix
	var operands []Object
	ts := textState{scale: 1}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil
		}
		switch c := p.data[p.pos]; {
		case c == '/' || c == '(' || c == '<' || c == '[' || c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9'):
			o, err := p.object(0)
			if err != nil {
				return err
			}
			operands = append(operands, o)
			continue
		case isDelimiter(c):
			p.pos++ // a stray delimiter
			continue
		}
		op := p.keyword()
		if op == "true" || op == "false" || op == "null" {
			operands = append(operands, Null{})
			continue
		}
		if s.ops++; s.ops > maxContentOps {
			return errContentTooComplex
		}
		if s.ops%4096 == 0 && s.ctx.Err() != nil {
			return s.ctx.Err()
		}
		nums := numbers(operands)
		switch op {
		case "q":
			if len(stack) < maxGraphicsSave {
				stack = append(stack, ctm)
			}
		case "Q":
			if n := len(stack); n > 0 {
				ctm, stack = stack[n-1], stack[:n-1]
			}
		case "cm":
			if len(nums) == 6 {
				ctm = matrix(nums).times(ctm)
			}
		case "Do":
			if err := s.xobject(operands, res, ctm, depth); err != nil {
				return err
			}
		case "BI":
			if err := skipInlineImage(p); err != nil {
				return err
			}
			s.boxes = append(s.boxes, ctm.box(0, 0, 1, 1))
		default:
			s.text(op, operands, nums, res, &ts, ctm)
		}
		operands = operands[:0]
	}
}

// numbers returns the operands as numbers when they all are.
func numbers(operands []Object) []float64 {
	out := make([]float64, 0, len(operands))
	for _, o := range operands {
		f, ok := number(o)
		if !ok {
			return nil
		}
		out = append(out, f)
	}
	return out
}

// text applies a text operator.
func (s *contentScanner) text(op string, operands []Object, nums []float64, res Dict, ts *textState, ctm matrix) {
	switch op {
	case "BT":
		ts.tm, ts.tlm = identity, identity
	case "Tf":
		if len(operands) == 2 {
			ts.size, _ = number(operands[1])
			ts.wide = s.wideFont(res, operands[0])
		}
	case "Tc", "Tw", "Tz", "TL", "Ts", "Tr":
		if len(nums) == 1 {
			ts.set(op, nums[0])
		}
	case "Td", "TD":
		if len(nums) == 2 {
			if op == "TD" {
				ts.leading = -nums[1]
			}
			ts.tlm = matrix{1, 0, 0, 1, nums[0], nums[1]}.times(ts.tlm)
			ts.tm = ts.tlm
		}
	case "Tm":
		if len(nums) == 6 {
			ts.tlm, ts.tm = matrix(nums), matrix(nums)
		}
	case "T*":
		ts.nextLine()
	case "Tj":
		if len(operands) == 1 {
			s.show(ts, ctm, operands[0])
		}
	case "'":
		if len(operands) == 1 {
			ts.nextLine()
			s.show(ts, ctm, operands[0])
		}
	case "\"":
		if len(operands) == 3 {
			ts.wordSpace, _ = number(operands[0])
			ts.charSpace, _ = number(operands[1])
			ts.nextLine()
			s.show(ts, ctm, operands[2])
		}
	case "TJ":
		if len(operands) == 1 {
			a, _ := operands[0].(Array)
			for _, e := range a {
				if f, ok := number(e); ok {
					ts.tm = matrix{1, 0, 0, 1, -f / 1000 * ts.size * ts.scale, 0}.times(ts.tm)
					continue
				}
				s.show(ts, ctm, e)
			}
		}
	}
}

// set applies a text state operator of one operand.
func (ts *textState) set(op string, v float64) {
	switch op {
	case "Tc":
		ts.charSpace = v
	case "Tw":
		ts.wordSpace = v
	case "Tz":
		ts.scale = v / 100
	case "TL":
		ts.leading = v
	case "Ts":
		ts.rise = v
	case "Tr":
		ts.mode = int(v)
	}
}

func (ts *textState) nextLine() {
	ts.tlm = matrix{1, 0, 0, 1, 0, -ts.leading}.times(ts.tlm)
	ts.tm = ts.tlm
}

// show places a string's glyphs and moves past them.
func (s *contentScanner) show(ts *textState, ctm matrix, str Object) {
	b := stringBytes(str)
	glyphs, spaces := len(b), bytes.Count(b, []byte{' '})
	if ts.wide {
		glyphs, spaces = len(b)/2, 0
	}
	w := (float64(glyphs)*(0.6*ts.size+ts.charSpace) + float64(spaces)*ts.wordSpace) * ts.scale
	if glyphs > 0 && ts.mode != 3 && ts.mode != 7 {
		s.boxes = append(s.boxes, ts.tm.times(ctm).box(0, ts.rise-0.25*ts.size, w, ts.rise+ts.size))
	}
	ts.tm = matrix{1, 0, 0, 1, w, 0}.times(ts.tm)
}

// wideFont reports a composite (Type0) font, whose codes take two bytes.
func (s *contentScanner) wideFont(res Dict, name Object) bool {
	n, _ := name.(Name)
	fonts, _ := s.d.Dict(res["Font"])
	f, err := s.d.Dict(fonts[n])
	return err == nil && f["Subtype"] == Name("Type0")
}

// xobject paints the XObject named by "Do": an image's unit square, or a
// form's content.
func (s *contentScanner) xobject(operands []Object, res Dict, ctm matrix, depth int) error {
	if len(operands) != 1 {
		return nil
	}
	n, _ := operands[0].(Name)
	xs, _ := s.d.Dict(res["XObject"])
	o, err := s.d.Resolve(xs[n])
	st, ok := o.(*Stream)
	if err != nil || !ok {
		return nil // a missing XObject paints nothing
	}
	if st.Dict["Subtype"] != Name("Form") {
		s.boxes = append(s.boxes, ctm.box(0, 0, 1, 1))
		return nil
	}
	if depth >= maxFormNesting {
		return errContentTooComplex
	}
	m := identity
	if nums := numbers(arrayOf(s.d, st.Dict["Matrix"])); len(nums) == 6 {
		m = matrix(nums)
	}
	data, err := s.d.decode(st)
	if err != nil {
		return fmt.Errorf("form XObject /%s: %w", n, err)
	}
	fres := res
	if r, err := s.d.Dict(st.Dict["Resources"]); err == nil {
		fres = r
	}
	return s.run(data, fres, m.times(ctm), depth+1)
}

func arrayOf(d *Document, o Object) []Object {
	a, _ := d.Array(o)
	return a
}

// skipInlineImage moves past an inline image's dictionary and data, to
// the "EI" that ends it (preceded by white space, followed by white space
// or the end).
func skipInlineImage(p *parser) error {
	i := bytes.Index(p.data[p.pos:], []byte("ID"))
	if i < 0 {
		return errors.New("pdf: inline image without ID")
	}
	p.pos += i + 2
	for {
		j := bytes.Index(p.data[p.pos:], []byte("EI"))
		if j < 0 {
			return errors.New("pdf: inline image without EI")
		}
		at := p.pos + j
		p.pos = at + 2
		if at > 0 && isSpace(p.data[at-1]) && (p.pos == len(p.data) || isSpace(p.data[p.pos]) || isDelimiter(p.data[p.pos])) {
			return nil
		}
	}
}
