package pdftools

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/quire-dev/quire/internal/pdf"
)

// A text field or a combo box that set-form fills is given a new
// appearance showing its value, so that every viewer, and flatten, shows
// it rather than the former value its widgets' appearances drew: one
// line, vertically centred, in black, at the size its default
// appearance (/DA) asks for, drawn in the fonts of the certificate page
// (which have every script) rather than the form's, which may lack the
// value's characters. Where those fonts lack one (or are not installed),
// and for a list, the widgets lose their appearance instead and the form
// asks viewers to draw one (NeedAppearances).

// daSize is the font size of a default appearance string: "/Helv 12 Tf 0 g".
var daSize = regexp.MustCompile(`/[^\s/]+\s+([0-9.]+)\s+Tf`)

// Sizes of the value drawn: the largest an automatic size (0 in /DA)
// takes, and the padding inside the widget's rectangle.
const (
	maxAutoSize = 12
	fieldPad    = 2
)

// appear gives each widget of f an appearance showing text, or reports
// false when it cannot draw text.
func (s *Service) appear(d *pdf.Document, f field, da string, text string, changed map[pdf.Ref]pdf.Dict) bool {
	r, err := s.opt.Fonts.Renderer()
	if err != nil || len(r.Missing(text)) > 0 {
		return false
	}
	for _, w := range f.widgets {
		wd := changedDict(d, w, changed)
		rect, ok := numbers(d, wd["Rect"], 4)
		if !ok {
			delete(wd, "AP")
			continue
		}
		width, height := math.Abs(rect[2]-rect[0]), math.Abs(rect[3]-rect[1])
		size := fontSize(d, wd, da, height)
		line, err := r.Line(text, size, 0)
		if err != nil {
			return false
		}
		// The caps (about 0.7 of the size) centred on the height.
		content := fmt.Appendf(nil, "/Tx BMC q %d %d %.2f %.2f re W n q 1 0 0 1 %d %.2f cm ",
			fieldPad/2, fieldPad/2, width-fieldPad, height-fieldPad, fieldPad, (height-0.7*size)/2)
		content = append(append(content, line.Content...), " Q Q EMC"...)
		wd["AP"] = pdf.Dict{"N": &pdf.Stream{Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Form"),
			"BBox":      pdf.Array{pdf.Int(0), pdf.Int(0), pdf.Real(width), pdf.Real(height)},
			"Resources": pdf.Dict{"Font": line.Fonts}}, Data: content}}
	}
	return true
}

// fontSize is the size the widget's default appearance asks for (its
// own /DA, else its field's, else the form's), or for an automatic size
// (0) one that fits the height, at most maxAutoSize.
func fontSize(d *pdf.Document, widget pdf.Dict, da string, height float64) float64 {
	if own := decodedText(d, widget["DA"]); own != "" {
		da = own
	}
	if m := daSize.FindStringSubmatch(da); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil && v > 0 && v < 1000 {
			return v
		}
	}
	return max(1, min(maxAutoSize, (height-2*fieldPad)*0.8))
}
