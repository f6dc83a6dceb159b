package gotenberg

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/pdftools"
)

// pdfRoute is a route of Gotenberg's PDF engines (8.x: /forms/pdfengines,
// 9.x: /forms/pdf) and the quire PDF operation it runs.
type pdfRoute struct {
	path  string
	op    string
	form  spec
	only9 bool // a route of 9.x alone
	// routeOnly are fields of form.served the route takes and its stage
	// does not.
	routeOnly []string
	// named are fields of form.served whose value names an uploaded file
	// the operation draws from (an image to stamp, a file to attach):
	// taken out of the PDFs, it follows each of them.
	named []string
	// request fills the operation's options from the form.
	request func(*values, *pdftools.Request)
}

// pdfDefaults are the 8.x conversion fields the PDF routes also take,
// which quire honours at their defaults only.
var pdfDefaults = map[string]string{"pdfa": "", "pdfua": "false", "metadata": "", "flatten": "false", "userPassword": "",
	"ownerPassword": ""}

var pdfWhy = map[string]string{"metadata": "write it with /forms/pdfengines/metadata/write",
	"flatten": "flatten the PDF with /forms/pdfengines/flatten", "userPassword": "encrypt the PDF with /forms/pdfengines/encrypt",
	"ownerPassword": "encrypt the PDF with /forms/pdfengines/encrypt"}

// routeWhy tells why the 9.x routes' fields quire cannot honour are
// refused.
var routeWhy = map[string]string{
	"creationDate": "quire keeps the creation date and sets the modification date to the time it writes",
	"modDate":      "quire sets the modification date to the time it writes",
	"name":         "quire lists the file under its uploaded name",
	"mimeType":     "quire gives the file the MIME type of its name",
	"font":         "quire draws the text with its own fonts",
}

// pdfRoutes are the PDF routes, each at its 8.x and its 9.x path.
var pdfRoutes = func() []pdfRoute {
	var rs []pdfRoute
	for _, r := range []pdfRoute{
		{path: "merge", op: pdftools.OpMerge, form: spec{served: mergeOutlineFields}, routeOnly: mergeOutlineFields, request: func(*values, *pdftools.Request) {}},
		{path: "split", op: pdftools.OpSplit, form: spec{served: []string{"splitMode", "splitSpan", "splitUnify", "every", "ranges"}}, request: split},
		{path: "flatten", op: pdftools.OpFlatten, request: func(*values, *pdftools.Request) {}},
		{path: "rotate", op: pdftools.OpRotate, form: spec{served: []string{"rotateAngle", "rotatePages", "angle", "pages"}}, request: rotate},
		{path: "encrypt", op: pdftools.OpEncrypt, form: spec{served: []string{"userPassword", "ownerPassword", "algorithm", "permissions"}}, request: encrypt},
		{path: "metadata/write", op: pdftools.OpMetadata, form: spec{served: []string{"metadata"}}, request: metadata},
		{path: "watermark", op: pdftools.OpWatermark, form: spec{served: markFields("watermark")}, request: mark("watermark")},
		{path: "stamp", op: pdftools.OpWatermark, form: spec{served: markFields("stamp")}, request: mark("stamp")},
		{path: "embed", op: pdftools.OpAttach, form: spec{embeds: true}, request: func(*values, *pdftools.Request) {}},
		{path: "select", op: pdftools.OpSplit, form: spec{served: []string{"pages"}}, request: selectPages, only9: true},
		{path: "set-bookmarks", op: pdftools.OpSetBookmarks, form: spec{served: []string{"bookmarks"}}, request: setBookmarks9, only9: true},
		{path: "set-metadata", op: pdftools.OpMetadata, form: spec{served: pdftools.MetadataKeys,
			unsupported: map[string]string{"creationDate": "", "modDate": ""}}, request: setMetadata9, only9: true},
		{path: "flatten-form", op: pdftools.OpFlatten, request: func(_ *values, req *pdftools.Request) { req.FormOnly = true }, only9: true},
		{path: "detach", op: pdftools.OpDetach, form: spec{served: []string{"name"}},
			request: func(v *values, req *pdftools.Request) { req.Name = v.str("name") }, only9: true},
		{path: "set-form", op: pdftools.OpSetForm, form: spec{served: []string{"fields"}}, request: setForm, only9: true},
		{path: "delete", op: pdftools.OpDelete, form: spec{served: []string{"pages"}}, request: deletePages, only9: true},
		{path: "stamp-text", op: pdftools.OpWatermark, form: spec{served: stampTextFields, unsupported: map[string]string{"font": "Helvetica"}},
			request: stampText, only9: true},
		{path: "stamp-image", op: pdftools.OpWatermark, form: spec{served: stampImageFields}, named: []string{"image"}, request: stampImage, only9: true},
		{path: "attach", op: pdftools.OpAttach, form: spec{served: []string{"file"}, unsupported: map[string]string{"name": "", "mimeType": ""}},
			named: []string{"file"}, request: func(*values, *pdftools.Request) {}, only9: true},
	} {
		r.form.unsupported, r.form.why = merged(r.form.unsupported), merged(pdfWhy, routeWhy)
		for k, v := range pdfDefaults {
			if !slices.Contains(r.form.served, k) {
				r.form.unsupported[k] = v
			}
		}
		prefixes := []string{"/forms/pdfengines/", "/forms/pdf/"}
		if r.only9 {
			prefixes = prefixes[1:]
		}
		for _, prefix := range prefixes {
			r9 := r
			r9.path = prefix + r.path
			rs = append(rs, r9)
		}
	}
	return rs
}()

// pdf runs the PDF operation of p: merge on all the files, in their
// order; any other on each file, its outputs answered together (a ZIP
// when there are several).
func (a *API) pdf(p pdfRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f, err := a.readForm(r, p.form, a.pdfLimits())
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		req := pdftools.Request{Op: p.op}
		p.request(&f.values, &req)
		if err := f.err(); err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		if len(f.files) == 0 {
			httpapi.Fail(w, r, missing("files", "is required: the PDFs"))
			return
		}
		if p.form.embeds && len(f.embeds) == 0 {
			httpapi.Fail(w, r, missing("embeds", "is required: the files to embed"))
			return
		}
		outline, err := a.mergeOutline(r.Context(), p.op, f)
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		extra := f.embeds
		named, hint := p.named, ""
		if p.op == pdftools.OpWatermark && req.Text == "" && !p.only9 {
			named, hint = []string{markPrefix(req) + "Expression"}, ": with '"+markPrefix(req)+"Source' image, it names the image"
		}
		for _, field := range named {
			taken, err := f.take(field, hint)
			if err != nil {
				httpapi.Fail(w, r, err)
				return
			}
			extra = append(extra, taken)
		}
		names, outs, documents, pages, err := a.apply(r.Context(), req, f.files, extra)
		if err == nil && outline != nil {
			_, outs, _, _, err = a.apply(r.Context(), pdftools.Request{Op: pdftools.OpSetBookmarks, Bookmarks: outline},
				[]httpapi.Upload{{Name: names[0], Data: outs[0]}}, nil)
		}
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		count(r.Context(), documents, 0, int64(pages))
		if err := send(w, r, names, outs, "pdf", "application/pdf"); err != nil {
			httpapi.Fail(w, r, err)
		}
	}
}

// apply runs req on files: merge on all of them, in their order; any
// other operation on each, a split's parts named after its file and their
// pages ("report_1-3.pdf"); the files of extra follow each batch's (the
// files to embed). It returns the outputs, their names, and what the
// metering counts.
func (a *API) apply(ctx context.Context, req pdftools.Request, files, extra []httpapi.Upload) (names []string, outs [][]byte, documents, pages int, err error) {
	batches := [][]httpapi.Upload{files}
	if req.Op != pdftools.OpMerge {
		batches = batches[:0]
		for _, file := range files {
			batches = append(batches, []httpapi.Upload{file})
		}
	}
	for _, batch := range batches {
		req.Files = req.Files[:0]
		for _, file := range slices.Concat(batch, extra) {
			req.Files = append(req.Files, pdftools.File{Name: file.Name, Data: file.Data})
		}
		res, err := a.d.PDFTools.Do(ctx, req)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		documents, pages = documents+res.Documents, pages+res.Pages
		if res.Parts == nil {
			names, outs = append(names, batch[0].Name), append(outs, res.Data)
			continue
		}
		for _, part := range res.Parts {
			names, outs = append(names, httpapi.FileBase(batch[0].Name)+"_"+part.Pages+".pdf"), append(outs, part.Data)
		}
	}
	return names, outs, documents, pages, nil
}

// postProcessing are the operations Gotenberg 8's conversion routes run
// on the PDFs they made when their fields are set, in Gotenberg's order,
// and the fields of each.
var postProcessing = []struct {
	op      string
	fields  []string
	request func(*values, *pdftools.Request)
}{
	{pdftools.OpSplit, []string{"splitMode", "splitSpan", "splitUnify"}, split},
	{pdftools.OpMetadata, []string{"metadata"}, metadata},
	{pdftools.OpFlatten, []string{"flatten"}, func(*values, *pdftools.Request) {}},
	{pdftools.OpEncrypt, []string{"userPassword", "ownerPassword"}, encrypt},
}

// postProcessingFields are the fields of postProcessing, and 9.x's stages.
var postProcessingFields = func() []string {
	var fields []string
	for _, p := range postProcessing {
		fields = append(fields, p.fields...)
	}
	return append(fields, "stages")
}()

// step is an operation on a request's PDFs, with the files it draws
// from (an image to stamp, a file to attach), which follow each PDF.
type step struct {
	req   pdftools.Request
	extra []httpapi.Upload
}

// postSteps are the operations f asks of a conversion route's PDFs: 8.x's
// flat fields, then 9.x's stages.
func postSteps(f *form) []step {
	var steps []step
	for _, p := range postProcessing {
		set := slices.ContainsFunc(p.fields, f.has)
		switch p.op {
		case pdftools.OpFlatten:
			set = f.bool("flatten")
		case pdftools.OpSplit:
			set = f.has("splitMode") || f.has("splitSpan") || f.bool("splitUnify")
		}
		if set {
			req := pdftools.Request{Op: p.op}
			p.request(&f.values, &req)
			steps = append(steps, step{req: req})
		}
	}
	return append(steps, stagesOf(f)...)
}

// postProcess runs steps on PDFs (outs, named after the uploads' names),
// and returns the outputs of the last with the pages they hold.
func (a *API) postProcess(ctx context.Context, steps []step, names []string, outs [][]byte) ([]string, [][]byte, int, error) {
	if len(steps) > 0 && a.d.PDFTools == nil {
		return nil, nil, 0, missing(postProcessingFields[0], "is not supported by this server: its PDF tools are off")
	}
	pages := 0
	for _, st := range steps {
		if st.req.Op == pdftools.OpMerge && len(outs) == 1 {
			continue // one PDF is its own merge
		}
		files := make([]httpapi.Upload, len(outs))
		for i := range outs {
			files[i] = httpapi.Upload{Name: names[i], Data: outs[i]}
		}
		var err error
		if names, outs, _, pages, err = a.apply(ctx, st.req, files, st.extra); err != nil {
			return nil, nil, 0, err
		}
	}
	return names, outs, pages, nil
}

// split maps Gotenberg's split. 8.x: intervals of splitSpan pages, or
// the pages splitSpan lists, each in a PDF of its own, or (splitUnify)
// all in one. 9.x: every N pages, or a PDF per entry of ranges.
func split(v *values, req *pdftools.Request) {
	if v.has("every") || v.has("ranges") {
		split9(v, req)
		return
	}
	span := v.str("splitSpan")
	switch mode := v.str("splitMode"); {
	case span == "":
		v.bad = append(v.bad, quire.Detail{Field: "splitSpan", Issue: "is required with 'splitMode' and 'splitUnify'"})
	case mode == "intervals":
		req.Every = v.int("splitSpan")
	case mode == "pages" && v.bool("splitUnify"):
		req.Ranges, req.Unify = span, true
	case mode == "pages":
		req.Ranges = eachPage(span)
		if req.Ranges == "" {
			v.invalid("splitSpan", "pages and ranges such as 1-3,5")
		}
	default:
		v.invalid("splitMode", "intervals or pages, with 'splitSpan'")
	}
}

// split9 maps 9.x's split: every (a number of pages), or ranges (a JSON
// list of which quire takes entries of one page or one range, such as
// ["1-3","4-"]).
func split9(v *values, req *pdftools.Request) {
	if v.has("every") == v.has("ranges") || v.has("splitMode") || v.has("splitSpan") || v.has("splitUnify") {
		v.bad = append(v.bad, quire.Detail{Field: "every", Issue: "or 'ranges' is required, not both, nor with 8.x's splitMode"})
		return
	}
	if v.has("every") {
		req.Every = v.int("every")
		return
	}
	var entries []string
	if err := json.Unmarshal([]byte(v.str("ranges")), &entries); err != nil || len(entries) == 0 {
		v.invalid("ranges", `a JSON list of page selections, such as ["1-3","4-"]`)
		return
	}
	for _, e := range entries {
		if strings.Contains(e, ",") {
			v.bad = append(v.bad, quire.Detail{Field: "ranges",
				Issue: fmt.Sprintf("is not supported by quire with the entry '%s': each entry one page or one range, such as 1-3 or 4-", e)})
			return
		}
	}
	req.Ranges = strings.Join(entries, ",")
}

// eachPage lists every page of the closed ranges of span ("1-3,5": "1,2,3,5");
// "" when span is not such a list or is too long.
func eachPage(span string) string {
	var pages []string
	for _, r := range strings.Split(span, ",") {
		first, last, isRange := strings.Cut(strings.TrimSpace(r), "-")
		a, errA := strconv.Atoi(first)
		b, errB := a, error(nil)
		if isRange {
			b, errB = strconv.Atoi(last)
		}
		if errA != nil || errB != nil || a < 1 || b < a || len(pages)+b-a >= 1000 {
			return ""
		}
		for p := a; p <= b; p++ {
			pages = append(pages, strconv.Itoa(p))
		}
	}
	return strings.Join(pages, ",")
}

// selectPages maps 9.x's select: the pages listed, in their order, in
// one PDF.
func selectPages(v *values, req *pdftools.Request) {
	if pages := selection(v, "the pages to keep"); pages != "" {
		req.Ranges, req.Unify = pages, true
	}
}

// deletePages maps 9.x's delete: every page but those listed.
func deletePages(v *values, req *pdftools.Request) {
	req.Pages = selection(v, "the pages to remove")
}

// selection is v's pages, a page selection of 9.x of which quire takes
// pages, ranges (open ones too) and "all"; "" when missing or refused.
func selection(v *values, what string) string {
	pages := strings.ReplaceAll(v.str("pages"), " ", "")
	if pages == "all" {
		pages = "1-"
	}
	switch {
	case pages == "":
		v.bad = append(v.bad, quire.Detail{Field: "pages", Issue: "is required: " + what + ", such as 3,1 or 1-2"})
	case strings.ContainsAny(pages, "!abcdefghijklmnopqrstuvwxyz"):
		v.bad = append(v.bad, quire.Detail{Field: "pages",
			Issue: fmt.Sprintf("is not supported by quire with '%s': list pages and ranges, such as 3,1 or 2-", v.str("pages"))})
		return ""
	}
	return pages
}

func rotate(v *values, req *pdftools.Request) {
	req.Angle, req.Pages = v.int("rotateAngle"), v.str("rotatePages")
	if v.has("angle") {
		req.Angle = v.int("angle")
	}
	if v.has("pages") {
		req.Pages = v.str("pages")
	}
}

// encrypt maps Gotenberg's encrypt: AES-256 with the passwords given,
// and the permissions of 9.x's permissions field, each allowed unless
// set to false (8.x's route allows them all).
func encrypt(v *values, req *pdftools.Request) {
	req.UserPassword, req.OwnerPassword = v.str("userPassword"), v.str("ownerPassword")
	if algorithm := v.str("algorithm"); algorithm != "" && algorithm != "aes256" {
		v.bad = append(v.bad, quire.Detail{Field: "algorithm", Issue: fmt.Sprintf("is not supported by quire with '%s': quire encrypts with aes256", algorithm)})
	}
	set := map[string]bool{}
	if v.has("permissions") && json.Unmarshal([]byte(v.str("permissions")), &set) != nil {
		v.invalid("permissions", `a JSON object of permissions, such as {"print":false}`)
		return
	}
	for name := range set {
		if name != "printHighQuality" && !slices.Contains(slices.Collect(maps.Values(permissionsOf9)), name) {
			v.bad = append(v.bad, quire.Detail{Field: "permissions", Issue: fmt.Sprintf("has no permission '%s'", name)})
		}
	}
	if !allowed9(set, "printHighQuality") && allowed9(set, "print") {
		v.bad = append(v.bad, quire.Detail{Field: "permissions",
			Issue: "is not supported by quire with printHighQuality false and print allowed: quire allows printing at full quality or not at all"})
	}
	for _, p := range pdftools.Permissions {
		if allowed9(set, permissionsOf9[p]) {
			req.Allow = append(req.Allow, p)
		}
	}
}

// permissionsOf9 name quire's permissions (pdftools.Permissions) in 9.x's
// words; 9.x's printHighQuality goes with print.
var permissionsOf9 = map[string]string{"print": "print", "modify": "modifyContent", "copy": "extractText",
	"annotate": "modifyAnnotations", "fill": "fillForms", "assemble": "assemble"}

// allowed9 reports whether set allows the permission of 9.x's name: each
// is allowed unless set to false.
func allowed9(set map[string]bool, name string) bool {
	allowed, given := set[name]
	return !given || allowed
}

// setMetadata9 maps 9.x's set-metadata: each property given is written.
func setMetadata9(v *values, req *pdftools.Request) {
	req.Set = map[string]string{}
	for _, k := range pdftools.MetadataKeys {
		if v.has(k) {
			req.Set[k] = v.str(k)
		}
	}
	if len(req.Set) == 0 {
		v.bad = append(v.bad, quire.Detail{Field: "title", Issue: "or another property is required: " + strings.Join(pdftools.MetadataKeys, ", ")})
	}
}

// metadata reads Gotenberg's metadata field, a JSON object of the
// document's properties ({"Title": "...", "Author": "..."}).
func metadata(v *values, req *pdftools.Request) {
	var m map[string]any
	if err := json.Unmarshal([]byte(v.str("metadata")), &m); err != nil || len(m) == 0 {
		v.invalid("metadata", "a JSON object of properties, such as {\"Title\":\"Report\"}")
		return
	}
	req.Set = map[string]string{}
	for k, val := range m {
		key := strings.ToLower(k)
		s, isString := val.(string)
		if !slices.Contains(pdftools.MetadataKeys, key) || !isString {
			v.bad = append(v.bad, quire.Detail{Field: "metadata",
				Issue: fmt.Sprintf("is not supported by quire for the property '%s': quire writes the strings %s", k, strings.Join(pdftools.MetadataKeys, ", "))})
			continue
		}
		req.Set[key] = s
	}
}

// setForm maps 9.x's set-form: fields, a JSON object of values by the
// fields' fully qualified names, each a string or a list of strings.
func setForm(v *values, req *pdftools.Request) {
	var fields map[string]json.RawMessage
	if err := decodeStrict(v.str("fields"), &fields); err != nil || len(fields) == 0 {
		v.invalid("fields", `a JSON object of values by field name, such as {"name":"Ada","colours":["red","blue"]}`)
		return
	}
	req.Fields = map[string][]string{}
	for name, raw := range fields {
		var one string
		var several []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			req.Fields[name] = []string{one}
		case json.Unmarshal(raw, &several) == nil:
			req.Fields[name] = several
		default:
			v.bad = append(v.bad, quire.Detail{Field: "fields", Issue: fmt.Sprintf("gives '%s' a value that is neither a string nor a list of strings", name)})
		}
	}
}
