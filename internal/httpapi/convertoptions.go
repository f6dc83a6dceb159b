package httpapi

import (
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/engine"
)

// The query parameters of POST /v1/convert: the formats, merge, then the
// conversion options (engine.JobOptions), named as Gotenberg's
// LibreOffice route names those it has. Anything else is refused, with a
// hint at the nearest known name.
var convertParams = []string{"from", "to", conversion.ParamMerge,
	engine.ParamPDFA, engine.ParamPDFUA, engine.ParamDecorativeImages, engine.ParamPageRanges, engine.ParamLandscape,
	engine.ParamExportFormFields, engine.ParamLosslessImageCompression, engine.ParamQuality,
	engine.ParamReduceImageResolution, engine.ParamMaxImageResolution, engine.ParamPassword,
	engine.ParamEngine, engine.ParamPaper, engine.ParamMargin, engine.ParamPrintBackground, engine.ParamScale, engine.ParamJavaScript}

// signParams are the query parameters of POST /v1/sign, whose JSON body
// has a fixed schema (the hosted API's SignRequest forbids other fields).
var signParams = []string{engine.ParamPDFA, paramLevel, paramStrict}

// The query parameters of POST /v1/sign that ask for a PAdES level
// (signing.Request.Level and Strict).
const (
	paramLevel  = "level"
	paramStrict = "strict"
)

// queryDecoder reads query parameters, collecting the details of
// everything wrong with them: unknown names, repeated parameters and
// values of the wrong type. The rules of the values are the services'
// own (engine.Request.Validate, for one).
type queryDecoder struct {
	q       url.Values
	details []quire.Detail
}

// newQueryDecoder checks q's names against known.
func newQueryDecoder(q url.Values, known []string) *queryDecoder {
	d := &queryDecoder{q: q}
	for name, values := range q {
		switch {
		case !slices.Contains(known, name): // case-sensitive: a near miss in case gets the hint
			d.bad(name, strings.Replace(unknownField(name, known), "field", "query parameter", 1))
		case len(values) > 1:
			d.bad(name, "is given more than once")
		}
	}
	return d
}

func (d *queryDecoder) bad(field, issue string) {
	d.details = append(d.details, quire.Detail{Field: field, Issue: issue})
}

// string returns the parameter's value, "" when absent.
func (d *queryDecoder) string(name string) string { return d.q.Get(name) }

// bool reads true or false; absent is false.
func (d *queryDecoder) bool(name string) bool {
	b := d.optionalBool(name)
	return b != nil && *b
}

// optionalBool reads true or false; absent is nil.
func (d *queryDecoder) optionalBool(name string) *bool {
	if !d.q.Has(name) {
		return nil
	}
	switch v := d.q.Get(name); v {
	case "true", "false":
		b := v == "true"
		return &b
	}
	d.bad(name, "must be true or false")
	return nil
}

// int reads a decimal integer; absent is 0.
func (d *queryDecoder) int(name string) int { return d.intOr(name, 0) }

// intOr reads a decimal integer; absent is def.
func (d *queryDecoder) intOr(name string, def int) int {
	if !d.q.Has(name) {
		return def
	}
	n, err := strconv.Atoi(d.q.Get(name))
	if err != nil {
		d.bad(name, "must be a whole number")
	}
	return n
}

// float reads a decimal number; absent is 0.
func (d *queryDecoder) float(name string) float64 {
	if !d.q.Has(name) {
		return 0
	}
	f, err := strconv.ParseFloat(d.q.Get(name), 64)
	if err != nil {
		d.bad(name, "must be a number, such as 0.8")
	}
	return f
}

// err is the VALIDATION_ERROR of everything found wrong, or nil.
func (d *queryDecoder) err(message string) error {
	if len(d.details) == 0 {
		return nil
	}
	sort.SliceStable(d.details, func(i, j int) bool { return d.details[i].Field < d.details[j].Field })
	return quire.Invalid(message, d.details...)
}

// convertOptions reads the conversion options.
func (d *queryDecoder) convertOptions() engine.JobOptions {
	return engine.JobOptions{
		PDFA:                     d.string(engine.ParamPDFA),
		PDFUA:                    d.bool(engine.ParamPDFUA),
		DecorativeImages:         d.bool(engine.ParamDecorativeImages),
		PageRanges:               d.string(engine.ParamPageRanges),
		Landscape:                d.bool(engine.ParamLandscape),
		ExportFormFields:         d.optionalBool(engine.ParamExportFormFields),
		LosslessImageCompression: d.bool(engine.ParamLosslessImageCompression),
		Quality:                  d.int(engine.ParamQuality),
		ReduceImageResolution:    d.bool(engine.ParamReduceImageResolution),
		MaxImageResolution:       d.int(engine.ParamMaxImageResolution),
		Password:                 d.string(engine.ParamPassword),
		Engine:                   d.string(engine.ParamEngine),
		Paper:                    d.string(engine.ParamPaper),
		Margin:                   d.string(engine.ParamMargin),
		PrintBackground:          d.bool(engine.ParamPrintBackground),
		Scale:                    d.float(engine.ParamScale),
		JavaScript:               d.bool(engine.ParamJavaScript),
	}
}
