package pdftools

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

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

	Angle int    // rotate (clockwise, a multiple of 90), watermark (degrees)
	Pages string // rotate, watermark: "1-3,5"; "": every page

	Set map[string]string // metadata: MetadataKeys to set

	UserPassword, OwnerPassword string   // encrypt
	Allow                       []string // encrypt: Permissions

	Text    string  // watermark: the text, else Files[1] is an image
	Opacity float64 // watermark: 0 < opacity <= 1; 0: 0.5
	Stamp   bool    // watermark: over the content rather than under it

	FacturX bool // attach: FacturXName is the invoice of a Factur-X PDF/A-3b

	Page int // render: 1-based; 0: 1
	DPI  int // render; 0: 150
}

// Bounds of the options.
const (
	maxText     = 500
	maxProperty = 2000
	maxPassword = 127 // AES-256 passwords are UTF-8 of at most 127 bytes
	maxDPI      = 1200
	defaultDPI  = 150
	maxRanges   = 1000
)

// pageSelection is a list of pages and ranges: "1-3,5,7-".
var pageSelection = regexp.MustCompile(`^\d+(-\d*)?(,\d+(-\d*)?)*$`)

// Validate checks the request, naming every bad option in a
// VALIDATION_ERROR (the query parameter, or "file" for the parts).
func (r *Request) Validate(maxFiles int) error {
	var d []quire.Detail
	bad := func(field, format string, a ...any) {
		d = append(d, quire.Detail{Field: field, Issue: fmt.Sprintf(format, a...)})
	}
	if !slices.Contains(Operations, r.Op) {
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
		for k, v := range r.Set {
			switch {
			case !slices.Contains(MetadataKeys, k):
				bad("set."+k, "is not a property; set.%s", strings.Join(MetadataKeys, ", set."))
			case len(v) > maxProperty:
				bad("set."+k, "at most %d bytes", maxProperty)
			}
		}
	case OpEncrypt:
		r.validateEncrypt(bad)
	case OpWatermark:
		r.validateWatermark(bad)
	case OpAttach:
		if r.FacturX && !slices.ContainsFunc(r.Files[min(1, n):], func(f File) bool { return strings.EqualFold(baseName(f.Name), FacturXName) }) {
			bad("file", "facturx=true needs a part whose file name is "+FacturXName)
		}
	case OpRender:
		if r.Page < 0 {
			bad("page", "must be 1 or more")
		}
		if r.DPI < 0 || r.DPI > maxDPI {
			bad("dpi", "must be between 1 and %d", maxDPI)
		}
	}
	if r.Pages != "" && !pageSelection.MatchString(r.Pages) {
		bad("pages", `must list pages and ranges, such as "1-3,5,8-"`)
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
	case r.Ranges != "" && !pageSelection.MatchString(r.Ranges):
		bad("ranges", `must list pages and ranges, such as "1-3,4-"`)
	case strings.Count(r.Ranges, ",") >= maxRanges:
		bad("ranges", "at most %d ranges", maxRanges)
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
}

// ranges returns the selection's ranges as 1-based page spans within n
// pages ("4-" runs to the last page); a range beyond the document is an
// error naming it.
func ranges(sel string, n int) ([][2]int, error) {
	var out [][2]int
	for _, part := range strings.Split(sel, ",") {
		lo, hi, open := strings.Cut(part, "-")
		from, _ := strconv.Atoi(lo)
		to := from
		if open {
			to = n
			if hi != "" {
				to, _ = strconv.Atoi(hi)
			}
		}
		if from < 1 || from > to || to > n {
			return nil, quire.Invalid("The page range is not in the document.",
				quire.Detail{Field: "ranges", Issue: fmt.Sprintf("%q is not within pages 1-%d", part, n)})
		}
		out = append(out, [2]int{from, to})
	}
	return out, nil
}

// baseName is a client's file name without its folders.
func baseName(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	return name[strings.LastIndex(name, "/")+1:]
}
