package annotate

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
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
	if err := f.chargeRows(c, cells, field); err != nil {
		return err
	}
	cols := gridColumns(tbl, cells)
	var b strings.Builder
	for i, row := range field.Rows {
		if i%1024 == 0 {
			if err := f.ctx.Err(); err != nil { // the client left: stop holding memory for it
				return err
			}
		}
		byGrid := len(row) == len(cols.width)
		b.WriteString("<" + c.w("tr") + ">")
		for i, tc := range cells {
			v := ""
			if k := i; byGrid {
				k = cols.start[i]
				if k < len(row) {
					v = row[k]
				}
			} else if k < len(row) {
				v = row[k]
			}
			b.WriteString(c.cell(tc, v, field.Options.CopyRowStyle))
		}
		b.WriteString("</" + c.w("tr") + ">")
	}
	c.story.edits[c] = ooxml.Edit{Span: c.content.Inner, With: string(c.story.doc.Data[c.content.Inner.Start:tmpl.Outer.End]) +
		b.String() + string(c.story.doc.Data[tmpl.Outer.End:c.content.Inner.End])}
	return nil
}

// tableHoldFactor is what filling a table holds for each byte of the rows'
// XML it writes: the rows' builder (up to twice the bytes as it grows),
// the spliced part, the package written. Measured with
// annotatetest.TableTemplate(10) and 26,000 and 260,000 rows of short
// values (about 140 bytes of XML a cell): the heap in use rose by 440
// bytes a cell beyond the decoded request.
const tableHoldFactor = 4

// cellMarkup is the XML of a new cell beside the template's properties
// and the value: the tc, p (with its w14:paraId), r and t tags.
const cellMarkup = 96

// chargeRows grows the request's memory reservation (memory.Add) by what
// the rows of field will hold once written after the template cells,
// before they are written.
func (f *filling) chargeRows(c *sdt, cells []*ooxml.Element, field *Field) error {
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
	return memory.Add(f.ctx, tableHoldFactor*size)
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

// cell is a new cell modelled on the template cell tc, holding value.
func (c *sdt) cell(tc *ooxml.Element, value string, copyStyle bool) string {
	p := tc.Child(nsW, "p")
	var pPr, rPr []byte
	if p != nil {
		pPr = c.raw(p.Child(nsW, "pPr"))
		if copyStyle {
			rPr = c.raw(firstTextRunProps(p))
		}
	}
	return "<" + c.w("tc") + ">" + string(c.raw(tc.Child(nsW, "tcPr"))) +
		"<" + c.w("p") + c.paraID() + ">" + string(pPr) + c.run(rPr, value) + "</" + c.w("p") + ">" +
		"</" + c.w("tc") + ">"
}

// paraID is a fresh w14:paraId attribute, or "" when the story does not
// declare the w14 prefix at its root.
func (c *sdt) paraID() string {
	s := c.story
	if !s.doc.Binds("w14", nsW14) {
		return ""
	}
	for {
		var b [4]byte
		rand.Read(b[:])
		id := fmt.Sprintf("%08X", binary.BigEndian.Uint32(b[:])&0x7FFFFFFF) // paraId is below 0x80000000
		if !s.paras[id] && id != "00000000" {
			s.paras[id] = true
			return ` w14:paraId="` + id + `"`
		}
	}
}
