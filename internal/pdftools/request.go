package pdftools

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quire-dev/quire"
)

// The operations of POST /v1/pdf/{operation}.
const (
	OpMerge     = "merge"
	OpSplit     = "split"
	OpRotate    = "rotate"
	OpFlatten   = "flatten"
	OpMetadata  = "metadata"
	OpEncrypt   = "encrypt"
	OpWatermark = "watermark"
	OpAttach    = "attach"
	OpRender    = "render"
)

// Operations lists them, in the order of the documentation.
var Operations = []string{OpMerge, OpSplit, OpRotate, OpFlatten, OpMetadata, OpEncrypt, OpWatermark, OpAttach, OpRender}

// The operations of Gotenberg's API (internal/gotenberg) that /v1 has no
// route for: reading the outline (as JSON: []Bookmark) and replacing it,
// deleting the pages of a selection (Pages), the others kept in one PDF
// in the document's order, listing the files the PDF embeds (as JSON:
// []Attachment) and removing the one listed under Name, listing the
// form's fields (as JSON: []FormField) and filling them (Fields).
const (
	OpBookmarks    = "bookmarks"
	OpSetBookmarks = "set-bookmarks"
	OpDelete       = "delete"
	OpAttachments  = "attachments"
	OpDetach       = "detach"
	OpForm         = "form"
	OpSetForm      = "set-form"
)

// gotenbergOnly are those operations: Validate accepts them, but they are
// not in Operations, which are the routes of /v1.
var gotenbergOnly = []string{OpBookmarks, OpSetBookmarks, OpDelete, OpAttachments, OpDetach, OpForm, OpSetForm}

// MetadataKeys are the document properties metadata sets (set.KEY), as
// named in the document information dictionary, lower-cased.
var MetadataKeys = []string{"title", "author", "subject", "keywords", "creator", "producer"}

// Permissions are the names allow takes (encrypt).
var Permissions = []string{"print", "copy", "modify", "annotate", "fill", "assemble"}

// FacturXName is the name of the part that attach embeds as the invoice
// of a Factur-X document (facturx=true), and its name in the PDF.
const FacturXName = "factur-x.xml"

// File is an uploaded file.
type File struct {
	Name string // the client's file name, "" if it gave none
	Data []byte
}

// Request is one PDF operation: the files (the PDF first, then for
// watermark an image, for attach the files to embed) and the options of
// the operation, as named in the query.
type Request struct {
	Op    string
	Files []File
	Force bool // rewrite a signed PDF, breaking its signatures

	Ranges string // split: "1-3,4-"
	Every  int    // split: pages per part
	Unify  bool   // split: the pages of the ranges in one PDF, in the order listed

	Angle int    // rotate (clockwise, a multiple of 90), watermark (degrees counter-clockwise)
	Pages string // rotate, watermark: "1-3,5"; "": every page; delete: the pages to delete (required)

	FormOnly bool // flatten: the form's fields alone, the other annotations (comments, stamps, links) kept

	Set map[string]string // metadata: MetadataKeys to set

	UserPassword, OwnerPassword string   // encrypt
	Allow                       []string // encrypt: Permissions

	Text    string     // watermark: the text, else Files[1] is an image
	Opacity float64    // watermark: 0 < opacity <= 1; 0: 0.5
	Stamp   bool       // watermark: over the content rather than under it
	At      *Placement // watermark: where and how large the mark is; nil: centred, sized to the page

	FacturX bool // attach: FacturXName is the invoice of a Factur-X PDF/A-3b

	Name string // detach: the name the PDF lists the file to remove under (Attachment.Name)

	Bookmarks []Bookmark // set-bookmarks: the new outline

	// Fields are set-form's values, keyed by the fields' fully qualified
	// names: one value, or for a list that selects several its options.
	Fields map[string][]string

	Page int // render: 1-based (DefaultPage when not given)
	DPI  int // render: 1 to 1200 (DefaultDPI when not given)
}

// Placement is a watermark put at a point of the page, as Gotenberg 9's
// stamps are, rather than centred on it and sized to it. Lengths are in
// points (1/72 inch). The mark turns by the request's Angle, in degrees
// counter-clockwise around (X, Y), as every watermark does; it is under
// the content, or over it with Stamp, and has the request's Opacity.
type Placement struct {
	// X, Y are the point from the lower left corner of the page's visible
	// box (CropBox, else MediaBox): the left end of the text's baseline,
	// or the image's lower left corner.
	X, Y float64

	FontSize float64 // text: more than 0 (DefaultFontSize when the client gives none)
	Color    string  // text: "#rrggbb"; "": black

	// Width and Height size an image: both given, it fills them; one
	// given (the other 0), it keeps its proportions; neither, each pixel
	// is a point.
	Width, Height float64
}

// DefaultFontSize is the size of a placed text whose client gives none.
const DefaultFontSize = 12

// pdfs are the request's PDFs: every file of a merge; of any other
// operation the first, which the others (an image to stamp, files to
// attach) go with.
func (r *Request) pdfs() []File {
	if r.Op == OpMerge || len(r.Files) == 0 {
		return r.Files
	}
	return r.Files[:1]
}

// The values of Page and DPI that a client who gives none gets: the
// adapters fill them in, so that an explicit 0 is refused like any other
// value out of range.
const (
	DefaultPage = 1
	DefaultDPI  = 150
)

// Bounds of the options.
const (
	maxText     = 500
	maxProperty = 2000
	maxPassword = 127 // AES-256 passwords are UTF-8 of at most 127 bytes
	maxDPI      = 1200
	maxRanges   = 1000
	maxPoints   = 1e6 // a placed mark's coordinates and sizes: pageSize's largest page side
)

// pageSelection is a list of pages and ranges: "1-3,5,7-".
var pageSelection = regexp.MustCompile(`^\d+(-\d*)?(,\d+(-\d*)?)*$`)

// hexColor is a colour as "#rrggbb".
var hexColor = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// Validate checks the request, naming every bad option in a
// VALIDATION_ERROR (the query parameter, or "file" for the parts).
func (r *Request) Validate(maxFiles int) error {
	var d []quire.Detail
	bad := func(field, format string, a ...any) {
		d = append(d, quire.Detail{Field: field, Issue: fmt.Sprintf(format, a...)})
	}
	if !slices.Contains(Operations, r.Op) && !slices.Contains(gotenbergOnly, r.Op) {
		return quire.Errorf(quire.CodeNotFound, "There is no PDF operation %q (operations: %s).", r.Op, strings.Join(Operations, ", "))
	}
	n := len(r.Files)
	switch {
	case n == 0:
		bad("file", "is required as a multipart/form-data part: the PDF")
	case n > maxFiles:
		bad("file", "at most %d files per request", maxFiles)
	case r.Op == OpMerge && n < 2:
		bad("file", "merge needs two PDFs or more, one file part each")
	case r.Op == OpAttach && n < 2:
		bad("file", "attach needs the PDF, then the files to embed, one file part each")
	case r.Op == OpWatermark && r.Text == "" && n != 2:
		bad("file", "watermark needs text=... or an image part after the PDF")
	case r.Op == OpWatermark && r.Text != "" && n != 1:
		bad("file", "watermark with text takes the PDF only")
	case r.Op != OpMerge && r.Op != OpAttach && r.Op != OpWatermark && n != 1:
		bad("file", "%s takes one PDF", r.Op)
	}
	switch r.Op {
	case OpSplit:
		r.validateSplit(bad)
	case OpRotate:
		if r.Angle == 0 || r.Angle%90 != 0 || r.Angle < -270 || r.Angle > 270 {
			bad("angle", "must be 90, 180 or 270 (or negative: counter-clockwise)")
		}
	case OpMetadata:
		r.validateMetadata(bad)
	case OpEncrypt:
		r.validateEncrypt(bad)
	case OpWatermark:
		r.validateWatermark(bad)
	case OpDelete:
		if r.Pages == "" {
			bad("pages", "is required: the pages to delete, such as \"2\" or \"1-3,5\"")
		}
	case OpSetBookmarks:
		r.validateBookmarks(bad)
	case OpDetach:
		r.validateDetach(bad)
	case OpSetForm:
		r.validateSetForm(bad)
	case OpAttach:
		if r.FacturX && !slices.ContainsFunc(r.Files[min(1, n):], func(f File) bool { return strings.EqualFold(baseName(f.Name), FacturXName) }) {
			bad("file", "facturx=true needs a part whose file name is "+FacturXName)
		}
	case OpRender:
		if r.Page < 1 {
			bad("page", "must be 1 or more")
		}
		if r.DPI < 1 || r.DPI > maxDPI {
			bad("dpi", "must be between 1 and %d", maxDPI)
		}
	}
	if r.Pages != "" {
		if !pageSelection.MatchString(r.Pages) {
			bad("pages", `must list pages and ranges, such as "1-3,5,8-"`)
		} else if issue := checkSelection(r.Pages); issue != "" {
			bad("pages", "%s", issue)
		}
	}
	if len(d) > 0 {
		return quire.Invalid("The PDF "+r.Op+" request is not valid.", d...)
	}
	return nil
}

func (r *Request) validateSplit(bad func(string, string, ...any)) {
	switch {
	case (r.Ranges == "") == (r.Every == 0):
		bad("ranges", "give either ranges=1-3,4- or every=N")
	case r.Every < 0:
		bad("every", "must be 1 or more")
	case r.Unify && r.Every != 0:
		bad("every", "a split into one PDF takes ranges, not every=N")
	case r.Ranges != "" && !pageSelection.MatchString(r.Ranges):
		bad("ranges", `must list pages and ranges, such as "1-3,4-"`)
	case strings.Count(r.Ranges, ",") >= maxRanges:
		bad("ranges", "at most %d ranges", maxRanges)
	case r.Ranges != "":
		if issue := checkSelection(r.Ranges); issue != "" {
			bad("ranges", "%s", issue)
		}
	}
}

func (r *Request) validateMetadata(bad func(string, string, ...any)) {
	for k, v := range r.Set {
		switch {
		case !slices.Contains(MetadataKeys, k):
			bad("set."+k, "is not a property; set.%s", strings.Join(MetadataKeys, ", set."))
		case len(v) > maxProperty:
			bad("set."+k, "at most %d bytes", maxProperty)
		case !utf8.ValidString(v):
			bad("set."+k, "must be UTF-8 text")
		default:
			if i := strings.IndexFunc(v, unicode.IsControl); i >= 0 {
				c, _ := utf8.DecodeRuneInString(v[i:])
				bad("set."+k, "must not hold control characters (such as NUL, ESC, CR or LF); found U+%04X", c)
			}
		}
	}
}

func (r *Request) validateEncrypt(bad func(string, string, ...any)) {
	if r.UserPassword == "" && r.OwnerPassword == "" {
		bad("userPassword", "give userPassword (to open), ownerPassword (to change permissions), or both")
	}
	if len(r.UserPassword) > maxPassword {
		bad("userPassword", "at most %d bytes", maxPassword)
	}
	if len(r.OwnerPassword) > maxPassword {
		bad("ownerPassword", "at most %d bytes", maxPassword)
	}
	for _, p := range r.Allow {
		if !slices.Contains(Permissions, p) {
			bad("allow", "%q is not a permission; allow takes %s", p, strings.Join(Permissions, ","))
		}
	}
}

func (r *Request) validateWatermark(bad func(string, string, ...any)) {
	if len(r.Text) > maxText {
		bad("text", "at most %d bytes", maxText)
	}
	if r.Opacity < 0 || r.Opacity > 1 {
		bad("opacity", "must be more than 0 and at most 1")
	}
	if r.Angle < -360 || r.Angle > 360 {
		bad("angle", "must be between -360 and 360 degrees")
	}
	if r.At != nil {
		r.At.validate(r.Text != "", bad)
	}
}

// validate checks a placement of a text (else of an image), naming the
// fields as Gotenberg's stamps do.
func (at *Placement) validate(text bool, bad func(string, string, ...any)) {
	within := func(field string, v float64) {
		if math.IsNaN(v) || math.Abs(v) > maxPoints {
			bad(field, "must be a number of points between %.0f and %.0f", -maxPoints, maxPoints)
		}
	}
	positive := func(field string, v float64) {
		if !(v > 0 && v <= maxPoints) {
			bad(field, "must be more than 0 and at most %.0f points", maxPoints)
		}
	}
	within("x", at.X)
	within("y", at.Y)
	if text {
		positive("fontSize", at.FontSize)
		if at.Color != "" && !hexColor.MatchString(at.Color) {
			bad("color", `must be a colour as #rrggbb, such as "#ff0000"`)
		}
		return
	}
	if at.Width != 0 { // 0: not given
		positive("width", at.Width)
	}
	if at.Height != 0 {
		positive("height", at.Height)
	}
}

// ranges returns the selection's ranges as 1-based page spans within n
// pages, by the rule convert's pageRanges follows too: "4-" runs to the
// last page, a range running past the end is cut there, and one that
// starts past it is left out; a selection left with no page is a 422.
// Validate has refused a page 0 and a range that ends before it starts.
func ranges(field, sel string, n int) ([][2]int, error) {
	var out [][2]int
	for _, part := range strings.Split(sel, ",") {
		from, to := bounds(part, n)
		if from > n {
			continue
		}
		out = append(out, [2]int{from, min(to, n)})
	}
	if len(out) == 0 {
		return nil, quire.Errorf(quire.CodeUnprocessable, "%s %q selects no page of the document, which has %d pages.", field, sel, n)
	}
	return out, nil
}

// bounds are the first and last page of a range ("4", "4-7", "4-"),
// last being open when the range is.
func bounds(part string, open int) (from, to int) {
	lo, hi, isRange := strings.Cut(part, "-")
	from, _ = strconv.Atoi(lo) // pageSelection allows digits only
	to = from
	if isRange {
		to = open
		if hi != "" {
			to, _ = strconv.Atoi(hi)
		}
	}
	return from, to
}

// checkSelection is what is wrong with a selection of pages that matches
// pageSelection, or "".
func checkSelection(sel string) string {
	for _, part := range strings.Split(sel, ",") {
		from, to := bounds(part, math.MaxInt)
		switch {
		case from < 1:
			return "pages are numbered from 1"
		case to < from:
			return fmt.Sprintf("range %s ends before it starts", part)
		}
	}
	return ""
}

// baseName is a client's file name without its folders.
func baseName(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	return name[strings.LastIndex(name, "/")+1:]
}
