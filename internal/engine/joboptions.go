package engine

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
)

// JobOptions are the options of one conversion, named after the query
// parameters of POST /v1/convert (close to Gotenberg's LibreOffice route).
// The zero value converts as before options existed: a plain PDF with
// LibreOffice's defaults.
type JobOptions struct {
	// PDFA makes the PDF archival: one of PDFAVersions; "" for none.
	PDFA string
	// PDFUA makes a tagged, accessible PDF (PDF/UA-1).
	PDFUA bool
	// DecorativeImages, with PDFUA, marks the images that have no
	// alternative text as decoration (artifacts) instead of refusing the
	// document.
	DecorativeImages bool
	// PageRanges selects the pages to export, e.g. "1-3,5"; "" for all.
	PageRanges string
	// Landscape turns the pages of a document without a page setup of its
	// own (HTML, Markdown) to landscape, in a PDF or a DOCX.
	Landscape bool
	// ExportFormFields: nil keeps LibreOffice's default (form fields are
	// exported as PDF form fields); false exports them as plain content.
	ExportFormFields *bool
	// LosslessImageCompression compresses images losslessly instead of
	// as JPEG.
	LosslessImageCompression bool
	// Quality is the JPEG quality of images, 1 to 100; 0 for LibreOffice's
	// default (90).
	Quality int
	// ReduceImageResolution reduces images to MaxImageResolution.
	ReduceImageResolution bool
	// MaxImageResolution is the resolution, in DPI, images are reduced
	// to (one of ImageResolutions); 0 for LibreOffice's default (300).
	MaxImageResolution int
	// Password opens an encrypted (password-protected) document.
	Password string
	// Export sets properties of LibreOffice's PDF export that Gotenberg's
	// LibreOffice route names (ExportProperties), each to true or false;
	// an unset one keeps LibreOffice's default. /v1/convert does not take
	// them.
	Export map[string]bool

	// Engine chooses the engine of an HTML or Markdown document made into
	// PDF: EngineChromium or EngineLibreOffice; "" for the default
	// (package conversion chooses). The options below are Chromium's (pageoptions.go).
	Engine string
	// Paper is the page size: a name of PaperSizes or "WxH" with a unit
	// (mm, cm or in), e.g. "210x297mm"; "" for A4 or the page's own CSS
	// @page size.
	Paper string
	// Margin is the page margin: one length with a unit for every side,
	// or four (top, right, bottom, left) separated by commas; "" for 10mm.
	Margin string
	// PrintBackground prints the page's background colours and images.
	PrintBackground bool
	// Scale scales the page's rendering, from 0.1 to 2; 0 for 1.
	Scale float64
	// JavaScript runs the page's scripts, still without any network.
	JavaScript bool
	// Shot, when its Format is set, asks Chromium for an image of the
	// page instead of its print.
	Shot Shot
	// Media is the CSS media type the page is laid out for, "print" or
	// "screen"; "": print for a PDF, screen for a Shot (Gotenberg's
	// emulatedMediaType).
	Media string
	// Page holds Gotenberg's Chromium options, which /v1/convert does
	// not take (pagemore.go).
	Page PageExtras
}

// PDFAVersions are the accepted values of JobOptions.PDFA, with the
// number LibreOffice's SelectPdfVersion gives each.
var PDFAVersions = []string{"PDF/A-1b", "PDF/A-2b", "PDF/A-3b"}

// ImageResolutions are the accepted values of JobOptions.MaxImageResolution.
var ImageResolutions = []int{75, 150, 300, 600, 1200}

// ExportProperties are the accepted keys of JobOptions.Export: boolean
// properties of LibreOffice's PDF export filter (writer_pdf_Export and its
// Calc and Impress kin), which change what the PDF holds, not what is
// read: bookmarks, notes and comments, hidden slides, empty pages, one
// page per sheet, the original document attached.
var ExportProperties = []string{"ExportBookmarks", "ExportBookmarksToPDFDestination", "ExportPlaceholders", "ExportNotes",
	"ExportNotesPages", "ExportOnlyNotesPages", "ExportNotesInMargin", "ConvertOOoTargetToPDFTarget", "ExportHiddenSlides",
	"IsSkipEmptyPages", "IsAddStream", "SinglePageSheets", "AllowDuplicateFieldNames"}

// ParamExport names JobOptions.Export in details: the key follows it
// (export.ExportNotes).
const ParamExport = "export"

// ExportsNotes reports whether o asks for the comments of a document in
// its PDF, so that they must reach LibreOffice.
func (o JobOptions) ExportsNotes() bool {
	return o.Export["ExportNotes"] || o.Export["ExportNotesInMargin"]
}

// MaxPasswordLength bounds JobOptions.Password.
const MaxPasswordLength = 256

// The query parameters each option is read from: Validate's details name
// them.
const (
	ParamPDFA                     = "pdfa"
	ParamPDFUA                    = "pdfua"
	ParamDecorativeImages         = "pdfua.decorativeImages"
	ParamPageRanges               = "pageRanges"
	ParamLandscape                = "landscape"
	ParamExportFormFields         = "exportFormFields"
	ParamLosslessImageCompression = "losslessImageCompression"
	ParamQuality                  = "quality"
	ParamReduceImageResolution    = "reduceImageResolution"
	ParamMaxImageResolution       = "maxImageResolution"
	ParamPassword                 = "password"
	ParamEngine                   = "engine"
	ParamPaper                    = "paper"
	ParamMargin                   = "margin"
	ParamPrintBackground          = "printBackground"
	ParamScale                    = "scale"
	ParamJavaScript               = "javascript"
)

// pageRanges is a comma-separated list of pages and closed ranges.
var pageRanges = regexp.MustCompile(`^[1-9][0-9]{0,5}(-[1-9][0-9]{0,5})?(,[1-9][0-9]{0,5}(-[1-9][0-9]{0,5})?)*$`)

// Validate reports every bad option at once, as a VALIDATION_ERROR whose
// details name the query parameters. from and to are the formats of the
// conversion, for the options that apply to some only; from may be ""
// when it is not known yet, and then those checks wait for Convert.
func (o JobOptions) Validate(from, to string) error {
	var d []quire.Detail
	bad := func(field, issue string) { d = append(d, quire.Detail{Field: field, Issue: issue}) }
	if o.PDFA != "" && !slices.Contains(PDFAVersions, o.PDFA) {
		bad(ParamPDFA, "must be one of "+strings.Join(PDFAVersions, ", "))
	}
	if o.DecorativeImages && !o.PDFUA {
		bad(ParamDecorativeImages, "applies only with pdfua=true")
	}
	if o.PageRanges != "" {
		if issue := checkPageRanges(o.PageRanges); issue != "" {
			bad(ParamPageRanges, issue)
		}
	}
	if o.Quality != 0 && (o.Quality < 1 || o.Quality > 100) {
		bad(ParamQuality, "must be from 1 to 100")
	}
	if o.Quality != 0 && o.LosslessImageCompression {
		bad(ParamQuality, "is the quality of JPEG images, which losslessImageCompression=true does not make")
	}
	if o.MaxImageResolution != 0 && !slices.Contains(ImageResolutions, o.MaxImageResolution) {
		bad(ParamMaxImageResolution, "must be one of "+joinInts(ImageResolutions))
	}
	if o.MaxImageResolution != 0 && !o.ReduceImageResolution {
		bad(ParamMaxImageResolution, "applies only with reduceImageResolution=true")
	}
	for _, k := range slices.Sorted(maps.Keys(o.Export)) {
		if !slices.Contains(ExportProperties, k) {
			bad(ParamExport+"."+k, "is not a property of LibreOffice's PDF export quire sets: "+strings.Join(ExportProperties, ", "))
		}
	}
	if len(o.Password) > MaxPasswordLength {
		bad(ParamPassword, fmt.Sprintf("must be at most %d bytes", MaxPasswordLength))
	}
	if to != "" && to != ToPDF && o.PDFOnly() {
		bad("to", "the PDF options ("+strings.Join(o.pdfOnlyParams(), ", ")+") need to=pdf")
	}
	if from = strings.ToLower(from); from != "" {
		if o.Landscape && from != FromHTML && from != FromMarkdown {
			bad(ParamLandscape, "applies to html and md only: a "+from+" document has a page setup of its own")
		}
		if o.Password != "" && !slices.Contains(encryptable, from) {
			bad(ParamPassword, "applies to "+strings.Join(encryptable, ", ")+" documents only")
		}
	}
	d = append(d, o.engineDetails(from, to)...)
	d = append(d, o.Shot.details()...)
	d = append(d, o.Page.details(o)...)
	if o.Media != "" && o.Media != "print" && o.Media != "screen" {
		bad("emulatedMediaType", "must be print or screen")
	}
	if len(d) == 0 {
		return nil
	}
	return quire.Invalid("The conversion options are not valid.", d...)
}

// encryptable are the formats whose documents can be password protected.
var encryptable = []string{FromDOCX, FromDOC, FromODT}

// MaxPageRangesLength bounds JobOptions.PageRanges.
const MaxPageRangesLength = 256

// checkPageRanges returns what is wrong with a page range list, or "".
func checkPageRanges(s string) string {
	if len(s) > MaxPageRangesLength {
		return fmt.Sprintf("must be at most %d characters", MaxPageRangesLength)
	}
	if !pageRanges.MatchString(s) {
		return `must list pages and ranges of pages, such as "1-3,5"`
	}
	for _, r := range strings.Split(s, ",") {
		first, last, ok := strings.Cut(r, "-")
		if !ok {
			continue
		}
		a, _ := strconv.Atoi(first) // the pattern allows digits only
		b, _ := strconv.Atoi(last)
		if a > b {
			return fmt.Sprintf("range %s ends before it starts", r)
		}
	}
	return ""
}

// pdfOnlyParams names the options set in o that only PDF output has.
func (o JobOptions) pdfOnlyParams() []string {
	return setNames(param{o.PDFA != "", ParamPDFA}, param{o.PDFUA, ParamPDFUA}, param{o.PageRanges != "", ParamPageRanges},
		param{o.ExportFormFields != nil, ParamExportFormFields}, param{o.LosslessImageCompression, ParamLosslessImageCompression},
		param{o.Quality != 0, ParamQuality}, param{o.ReduceImageResolution, ParamReduceImageResolution},
		param{o.MaxImageResolution != 0, ParamMaxImageResolution}, param{len(o.Export) > 0, ParamExport})
}

// PDFOnly reports whether o sets an option that only PDF output has.
func (o JobOptions) PDFOnly() bool { return len(o.pdfOnlyParams()) > 0 }

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
