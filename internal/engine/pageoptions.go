package engine

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
)

// Engines of JobOptions.Engine. HTML and Markdown made into PDF go to
// Chromium (package chromium) unless the options ask for LibreOffice;
// everything else goes to LibreOffice (package conversion chooses).
const (
	EngineChromium    = "chromium"
	EngineLibreOffice = "libreoffice"
)

// Engines are the accepted values of JobOptions.Engine.
var Engines = []string{EngineChromium, EngineLibreOffice}

// IsWebPage reports whether documents of format from are web content,
// which Chromium prints.
func IsWebPage(from string) bool {
	from = strings.ToLower(from)
	return from == FromHTML || from == FromMarkdown
}

// LibreOfficeParams names the options set in o that only LibreOffice has.
func (o JobOptions) LibreOfficeParams() []string {
	return setNames(param{o.PDFA == PDFAVersions[0], ParamPDFA},
		param{o.ExportFormFields != nil, ParamExportFormFields}, param{o.LosslessImageCompression, ParamLosslessImageCompression},
		param{o.Quality != 0, ParamQuality}, param{o.ReduceImageResolution, ParamReduceImageResolution},
		param{o.MaxImageResolution != 0, ParamMaxImageResolution}, param{o.Password != "", ParamPassword}, param{len(o.Export) > 0, ParamExport})
}

// ChromiumParams names the options set in o that only Chromium has.
func (o JobOptions) ChromiumParams() []string {
	return setNames(param{o.Paper != "", ParamPaper}, param{o.Margin != "", ParamMargin},
		param{o.PrintBackground, ParamPrintBackground}, param{o.Scale != 0, ParamScale}, param{o.JavaScript, ParamJavaScript})
}

// param is a query parameter and whether an option sets it.
type param struct {
	set  bool
	name string
}

// setNames returns the names of the parameters that are set.
func setNames(ps ...param) []string {
	var names []string
	for _, p := range ps {
		if p.set {
			names = append(names, p.name)
		}
	}
	return names
}

// Bounds of Chromium's options.
const (
	MinScale       = 0.1 // Chromium's own bounds of Page.printToPDF
	MaxScale       = 2.0
	minPaperInches = 1.0
	maxPaperInches = 100.0
)

// PaperSizes are the named values of JobOptions.Paper, in inches.
var PaperSizes = map[string][2]float64{
	"A3": {297 / 25.4, 420 / 25.4}, "A4": {210 / 25.4, 297 / 25.4}, "A5": {148 / 25.4, 210 / 25.4},
	"Letter": {8.5, 11}, "Legal": {8.5, 14},
}

// lengthUnits are the units of lengths in the options, in inches.
var lengthUnits = map[string]float64{"mm": 1 / 25.4, "cm": 1 / 2.54, "in": 1}

// engineDetails returns what is wrong with o's engine and Chromium's
// options, for Validate.
func (o JobOptions) engineDetails(from, to string) []quire.Detail {
	var d []quire.Detail
	bad := func(field, issue string) { d = append(d, quire.Detail{Field: field, Issue: issue}) }
	if o.Engine != "" && !slices.Contains(Engines, strings.ToLower(o.Engine)) {
		bad(ParamEngine, "must be one of "+strings.Join(Engines, ", "))
		return d
	}
	if o.Paper != "" {
		if _, _, err := o.PaperSize(); err != nil {
			bad(ParamPaper, err.Error())
		}
	}
	if o.Margin != "" {
		if _, err := o.Margins(); err != nil {
			bad(ParamMargin, err.Error())
		} else if err := o.marginsFit(); err != nil {
			bad(ParamMargin, err.Error())
		}
	}
	if o.Scale != 0 && (o.Scale < MinScale || o.Scale > MaxScale) {
		bad(ParamScale, fmt.Sprintf("must be from %g to %g", MinScale, MaxScale))
	}
	chromium, lo := o.ChromiumParams(), o.LibreOfficeParams()
	switch {
	case o.Engine == "" && len(chromium) > 0 && len(lo) > 0:
		bad(ParamEngine, "the options "+strings.Join(chromium, ", ")+" are Chromium's and "+strings.Join(lo, ", ")+" LibreOffice's: one engine cannot honour both")
	case len(chromium) > 0 && (to != "" && to != ToPDF || from != "" && !IsWebPage(from)):
		bad(chromium[0], "applies to html and md made into pdf only (Chromium's options: "+strings.Join(chromium, ", ")+")")
	case len(chromium) > 0 && strings.EqualFold(o.Engine, EngineLibreOffice):
		bad(ParamEngine, "libreoffice has none of the options "+strings.Join(chromium, ", ")+"; they are Chromium's")
	case strings.EqualFold(o.Engine, EngineChromium) && len(lo) > 0:
		bad(ParamEngine, "chromium has none of the options "+strings.Join(lo, ", ")+"; they are LibreOffice's")
	case strings.EqualFold(o.Engine, EngineChromium) && (to != "" && to != ToPDF || from != "" && !IsWebPage(from)):
		bad(ParamEngine, "chromium makes html and md into pdf only")
	}
	return d
}

// PaperSize returns the width and height of o.Paper, which must be set,
// in inches.
func (o JobOptions) PaperSize() (w, h float64, err error) {
	for name, size := range PaperSizes {
		if strings.EqualFold(o.Paper, name) {
			return size[0], size[1], nil
		}
	}
	ws, hs, ok := strings.Cut(strings.ToLower(o.Paper), "x")
	unit := lengthUnit(hs)
	if !ok || unit == "" {
		return 0, 0, fmt.Errorf("must be one of %s, or a width and height such as 210x297mm or 8.5x11in", strings.Join(slices.Sorted(maps.Keys(PaperSizes)), ", "))
	}
	w, errW := strconv.ParseFloat(ws, 64)
	h, errH := strconv.ParseFloat(strings.TrimSuffix(hs, unit), 64)
	if errW != nil || errH != nil {
		return 0, 0, fmt.Errorf("must be a width and height such as 210x297mm or 8.5x11in")
	}
	w, h = w*lengthUnits[unit], h*lengthUnits[unit]
	if min(w, h) < minPaperInches || max(w, h) > maxPaperInches {
		return 0, 0, fmt.Errorf("each side must be from %gin (25.4mm) to %gin (2540mm)", minPaperInches, maxPaperInches)
	}
	return w, h, nil
}

// Margins returns o.Margin's top, right, bottom and left margins in
// inches; all zero when o.Margin is "".
func (o JobOptions) Margins() ([4]float64, error) {
	var m [4]float64
	if o.Margin == "" {
		return m, nil
	}
	parts := strings.Split(strings.ToLower(o.Margin), ",")
	if len(parts) != 1 && len(parts) != 4 {
		return m, fmt.Errorf("must be one length (such as 10mm) or four, top,right,bottom,left")
	}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		unit := lengthUnit(p)
		v, err := strconv.ParseFloat(strings.TrimSuffix(p, unit), 64)
		if unit == "" || err != nil || v < 0 {
			return m, fmt.Errorf("%q is not a length: a number and a unit, mm, cm or in, such as 10mm", p)
		}
		m[i] = v * lengthUnits[unit]
	}
	if len(parts) == 1 {
		m = [4]float64{m[0], m[0], m[0], m[0]}
	}
	return m, nil
}

// marginsFit checks that the margins leave room on the page (A4 unless
// o.Paper names another).
func (o JobOptions) marginsFit() error {
	w, h := PaperSizes["A4"][0], PaperSizes["A4"][1]
	if o.Paper != "" {
		var err error
		if w, h, err = o.PaperSize(); err != nil {
			return nil // told about the paper
		}
	}
	if o.Landscape {
		w, h = h, w
	}
	m, _ := o.Margins()
	if m[1]+m[3] >= w*0.9 || m[0]+m[2] >= h*0.9 {
		return fmt.Errorf("leaves less than a tenth of the page for the content")
	}
	return nil
}

// lengthUnit returns the unit that ends s, or "".
func lengthUnit(s string) string {
	for u := range lengthUnits {
		if strings.HasSuffix(s, u) {
			return u
		}
	}
	return ""
}
