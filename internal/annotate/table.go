package annotate

import (
	"strconv"
	"strings"

	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/ooxml"
)

// fillTable appends one row per value row to the first table of the
// control, after its last row, which is the template: each new cell has
// the template cell's properties and one paragraph with the template
// paragraph's properties (and its run properties with CopyRowStyle).
func (f *filling) fillTable(c *sdt, tbl *ooxml.Element, field *Field) error {
	var tmpl *ooxml.Element
	for _, tr := range tbl.Children {
		if tr.Is(nsW, "tr") {
			tmpl = tr
		}
	}
	if tmpl == nil || len(field.Rows) == 0 {
		return nil
	}
	var cells []*ooxml.Element
	for _, tc := range tmpl.Children {
		if tc.Is(nsW, "tc") {
			cells = append(cells, tc)
		}
	}
	size, err := f.chargeRows(c, cells, field)
	if err != nil {
		return err
	}
	cols := gridColumns(tbl, cells)
	news := make([]newCell, len(cells))
	for i, tc := range cells {
		news[i] = c.newCell(tc, field.Options.CopyRowStyle)
	}
	tr, trEnd := "<"+c.w("tr")+">", "</"+c.w("tr")+">"
	var b strings.Builder
	b.Grow(int(size)) // at once: growing by doubling would hold up to twice the rows
	for i, row := range field.Rows {
		if i%1024 == 0 {
			if err := f.ctx.Err(); err != nil { // the client left: stop holding memory for it
				return err
			}
		}
		byGrid := len(row) == len(cols.width)
		b.WriteString(tr)
		for i := range cells {
			v := ""
			if k := i; byGrid {
				k = cols.start[i]
				if k < len(row) {
					v = row[k]
				}
			} else if k < len(row) {
				v = row[k]
			}
			news[i].write(&b, v)
		}
		b.WriteString(trEnd)
	}
	// The rows go in after the template row, spliced in only as the
	// package is written: the part is never copied whole with them.
	c.story.edits[c] = ooxml.Edit{Span: ooxml.Span{Start: tmpl.Outer.End, End: tmpl.Outer.End}, With: b.String()}
	return nil
}

// What filling a table holds beyond its decoded request is the rows' XML,
// written once into a builder sized for it and spliced into the part only
// as the package is written; a package for a converter (stored, not
// deflated) holds the rows a second time. Measured with
// annotatetest.TableTemplate(10) and 260,000 rows of short values
// (TestLargeTablesStayWithinTheBudget): the rows estimated at 381 MiB,
// the heap's peak 398 MiB for a DOCX (7 MiB deflated) and 682 MiB for a
// converter's package (309 MiB stored).
// cellMarkup is the XML of a new cell beside the template's properties
// and the value: the tc, p (with its w14:paraId), r and t tags.
const cellMarkup = 96

// chargeRows grows the request's memory reservation (memory.Add) by what
// the rows of field will hold once written after the template cells,
// before they are written. It returns the size of the rows' XML.
func (f *filling) chargeRows(c *sdt, cells []*ooxml.Element, field *Field) (int64, error) {
	perRow := int64(len("<w:tr></w:tr>"))
	for _, tc := range cells {
		perRow += cellMarkup + int64(len(c.raw(tc.Child(nsW, "tcPr"))))
		if p := tc.Child(nsW, "p"); p != nil {
			perRow += int64(len(c.raw(p.Child(nsW, "pPr"))) + len(c.raw(firstTextRunProps(p))))
		}
	}
	size := int64(len(field.Rows)) * perRow
	for _, row := range field.Rows {
		for _, v := range row {
			size += int64(len(v))
		}
	}
	holds := size
	if f.edits.Uncompressed {
		holds += size
	}
	return size, memory.Add(f.ctx, holds)
}

// columns are the table's grid and the grid column each template cell starts at.
type columns struct {
	width []int
	start []int
}

func gridColumns(tbl *ooxml.Element, cells []*ooxml.Element) columns {
	var cols columns
	if grid := tbl.Child(nsW, "tblGrid"); grid != nil {
		for _, g := range grid.Children {
			if g.Is(nsW, "gridCol") {
				cols.width = append(cols.width, 0)
			}
		}
	}
	at := 0
	for _, tc := range cells {
		cols.start = append(cols.start, at)
		span := 1
		if pr := tc.Child(nsW, "tcPr"); pr != nil {
			if gs := pr.Child(nsW, "gridSpan"); gs != nil {
				v, _ := gs.AttrValue(nsW, "val")
				if n, err := strconv.Atoi(v); err == nil && n > 1 {
					span = n
				}
			}
		}
		at += span
	}
	return cols
}

// newCell is a cell modelled on a template cell, written once per row.
type newCell struct {
	c          *sdt
	head, body string // before the paragraph's w14:paraId, and between it and the text
	text       textTags
	tail       string
}

// newCell models new cells on the template cell tc.
func (c *sdt) newCell(tc *ooxml.Element, copyStyle bool) newCell {
	p := tc.Child(nsW, "p")
	var pPr, rPr []byte
	if p != nil {
		pPr = c.raw(p.Child(nsW, "pPr"))
		if copyStyle {
			rPr = c.raw(firstTextRunProps(p))
		}
	}
	return newCell{c: c,
		head: "<" + c.w("tc") + ">" + string(c.raw(tc.Child(nsW, "tcPr"))) + "<" + c.w("p"),
		body: ">" + string(pPr) + "<" + c.w("r") + ">" + string(rPr),
		text: c.textTags(),
		tail: "</" + c.w("r") + ">" + "</" + c.w("p") + ">" + "</" + c.w("tc") + ">"}
}

// write writes a new cell holding value.
func (n newCell) write(b *strings.Builder, value string) {
	b.WriteString(n.head)
	n.c.writeParaID(b)
	b.WriteString(n.body)
	n.text.write(b, value)
	b.WriteString(n.tail)
}

// writeParaID writes a fresh w14:paraId attribute, or nothing when the
// story does not declare the w14 prefix at its root. The ids given out
// count up from a random start, skipping those of the part as read: they
// are unique without remembering each.
func (c *sdt) writeParaID(b *strings.Builder) {
	s := c.story
	if !s.doc.Binds("w14", nsW14) {
		return
	}
	var id [9]byte
	for {
		s.para = (s.para + 1) & 0x7FFFFFFF                              // paraId is below 0x80000000
		hex := strconv.AppendUint(id[:0], uint64(s.para)|1<<32, 16)[1:] // 8 digits
		for i, d := range hex {
			if 'a' <= d && d <= 'f' {
				hex[i] = d - 'a' + 'A'
			}
		}
		if s.para != 0 && !s.paras[string(hex)] {
			b.WriteString(` w14:paraId="`)
			b.Write(hex)
			b.WriteByte('"')
			return
		}
	}
}
