package gotenberg

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/pdftools"
)

// stageOps are the stages of Gotenberg 9 that quire runs: each takes the
// fields of its own route (/forms/pdf/OP), as {"op":"rotate","angle":90}.
var stageOps = []string{"merge", "split", "select", "delete", "rotate", "flatten", "flatten-form", "encrypt", "stamp-text", "stamp-image",
	"set-bookmarks", "set-metadata", "set-form", "attach", "detach"}

// stagesQuireLacks are Gotenberg 9's other stages, each with why quire
// does not run it: the stage is refused (400) naming it, and so is its
// route.
var stagesQuireLacks = map[string]string{
	"compose":      "quire does not lay pages out anew",
	"stamp-pdf":    "quire stamps text or an image, not a page of a PDF",
	"redact":       "quire does not redact",
	"optimize":     "quire does not recompress a PDF",
	"remediate":    "quire makes PDF/A and PDF/UA as it converts (pdfa, pdfua), and Factur-X with /forms/pdfengines/factur-x; it does not repair a PDF",
	"sign":         "quire signs with its own keys, never an uploaded certificate: POST /v1/sign",
	"timestamp":    "quire time-stamps the documents it signs (POST /v1/sign) with its own authority, never one a request names",
	"extract-text": "quire does not extract text",
}

// maxStages bounds the stages of one request.
const maxStages = 20

// stagesOf reads the stages field of f, if set, as PDF operations in
// their order, each with the files it names taken out of f's; what is
// wrong is added to f's errors, naming "stages".
func stagesOf(f *form) []step {
	if !f.has("stages") {
		return nil
	}
	var stages []map[string]any
	d := json.NewDecoder(strings.NewReader(f.str("stages")))
	d.UseNumber()
	if err := d.Decode(&stages); err != nil || len(stages) == 0 || len(stages) > maxStages {
		f.invalid("stages", fmt.Sprintf(`a JSON array of 1 to %d stages, such as [{"op":"merge"},{"op":"rotate","angle":90}]`, maxStages))
		return nil
	}
	var steps []step
	for i, stage := range stages {
		if st, issue := stageStep(stage, f); issue != "" {
			f.bad = append(f.bad, quire.Detail{Field: "stages", Issue: fmt.Sprintf("stage %d %s", i+1, issue)})
		} else {
			steps = append(steps, st)
		}
	}
	return steps
}

// stageStep is the operation of one stage, or what is wrong with it; the
// files it names are taken out of f's.
func stageStep(stage map[string]any, f *form) (step, string) {
	op, _ := stage["op"].(string)
	if why, lacked := stagesQuireLacks[op]; lacked {
		return step{}, fmt.Sprintf("('%s') is not supported by quire: %s", op, why)
	}
	i := slices.IndexFunc(pdfRoutes, func(r pdfRoute) bool { return r.path == "/forms/pdf/"+op })
	if !slices.Contains(stageOps, op) || i < 0 {
		return step{}, fmt.Sprintf("('%s') is not a stage: quire's stages are %s", op, strings.Join(stageOps, ", "))
	}
	route, fields := pdfRoutes[i], values{m: map[string][]string{}}
	for k, val := range stage {
		if k == "op" {
			continue
		}
		_, known := route.form.unsupported[k]
		switch served := slices.Contains(route.form.served, k); {
		case slices.Contains(route.routeOnly, k) || !served && !known:
			return step{}, fmt.Sprintf("('%s') has a field quire does not take: '%s'", op, k)
		case !served: // honoured at Gotenberg's default only
			if d := route.form.check(k, fieldText(val)); len(d) > 0 {
				return step{}, fmt.Sprintf("('%s'): '%s' %s", op, k, d[0].Issue)
			}
			continue
		}
		fields.m[k] = []string{fieldText(val)}
	}
	st := step{req: pdftools.Request{Op: route.op}}
	route.request(&fields, &st.req)
	if len(fields.bad) > 0 {
		return step{}, fmt.Sprintf("('%s'): '%s' %s", op, fields.bad[0].Field, fields.bad[0].Issue)
	}
	for _, field := range route.named {
		file, ok := f.takeFile(fields.str(field))
		if !ok {
			return step{}, fmt.Sprintf("('%s'): '%s' names no file uploaded ('%s')", op, field, fields.str(field))
		}
		st.extra = append(st.extra, file)
	}
	return st, ""
}

// fieldText is a stage's field as its route's form would send it: a
// string as it is, anything else (bookmarks' list) as JSON.
func fieldText(val any) string {
	if s, ok := val.(string); ok {
		return s
	}
	b, _ := json.Marshal(val) // decoded from JSON: it encodes back
	return string(b)
}

// pipe is 9.x's /forms/pdf/pipe: the stages, in their order, on the PDFs.
func (a *API) pipe(w http.ResponseWriter, r *http.Request) {
	f, err := a.readForm(r, spec{served: []string{"stages"}}, a.pdfLimits())
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	steps := stagesOf(f)
	if !f.has("stages") {
		f.bad = append(f.bad, quire.Detail{Field: "stages", Issue: "is required: the stages to run, in order"})
	}
	if len(f.files) == 0 {
		f.bad = append(f.bad, quire.Detail{Field: "files", Issue: "is required: the PDFs"})
	}
	if err := f.err(); err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	names, outs := make([]string, len(f.files)), make([][]byte, len(f.files))
	for i, file := range f.files {
		names[i], outs[i] = file.Name, file.Data
	}
	names, outs, pages, err := a.postProcess(r.Context(), steps, names, outs)
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	count(r.Context(), len(f.files), 0, int64(pages))
	if err := send(w, r, names, outs, "pdf", "application/pdf"); err != nil {
		httpapi.Fail(w, r, err)
	}
}
