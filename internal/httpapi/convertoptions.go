package httpapi

import (
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/convert"
)

// The query parameters of POST /v1/convert: the formats, merge, then the
// conversion options (convert.JobOptions), named as Gotenberg's
// LibreOffice route names those it has. Anything else is refused, with a
// hint at the nearest known name.
var convertParams = []string{"from", "to", conversion.ParamMerge,
	convert.ParamPDFA, convert.ParamPDFUA, convert.ParamDecorativeImages, convert.ParamPageRanges, convert.ParamLandscape,
	convert.ParamExportFormFields, convert.ParamLosslessImageCompression, convert.ParamQuality,
	convert.ParamReduceImageResolution, convert.ParamMaxImageResolution, convert.ParamPassword,
	convert.ParamEngine, convert.ParamPaper, convert.ParamMargin, convert.ParamPrintBackground, convert.ParamScale, convert.ParamJavaScript}

// signParams are the query parameters of POST /v1/sign, whose JSON body
// has a fixed schema (the hosted API's SignRequest forbids other fields).
var signParams = []string{convert.ParamPDFA, paramLevel, paramStrict}

// The query parameters of POST /v1/sign that ask for a PAdES level
// (signing.Request.Level and Strict).
const (
	paramLevel  = "level"
	paramStrict = "strict"
)

// queryDecoder reads query parameters, collecting the details of
// everything wrong with them: unknown names, repeated parameters and
// values of the wrong type. The rules of the values are the services'
// own (convert.Request.Validate, for one).
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
func (d *queryDecoder) convertOptions() convert.JobOptions {
	return convert.JobOptions{
		PDFA:                     d.string(convert.ParamPDFA),
		PDFUA:                    d.bool(convert.ParamPDFUA),
		DecorativeImages:         d.bool(convert.ParamDecorativeImages),
		PageRanges:               d.string(convert.ParamPageRanges),
		Landscape:                d.bool(convert.ParamLandscape),
		ExportFormFields:         d.optionalBool(convert.ParamExportFormFields),
		LosslessImageCompression: d.bool(convert.ParamLosslessImageCompression),
		Quality:                  d.int(convert.ParamQuality),
		ReduceImageResolution:    d.bool(convert.ParamReduceImageResolution),
		MaxImageResolution:       d.int(convert.ParamMaxImageResolution),
		Password:                 d.string(convert.ParamPassword),
		Engine:                   d.string(convert.ParamEngine),
		Paper:                    d.string(convert.ParamPaper),
		Margin:                   d.string(convert.ParamMargin),
		PrintBackground:          d.bool(convert.ParamPrintBackground),
		Scale:                    d.float(convert.ParamScale),
		JavaScript:               d.bool(convert.ParamJavaScript),
	}
}
