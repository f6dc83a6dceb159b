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
var stageOps = []string{"merge", "select", "rotate", "flatten", "encrypt", "set-bookmarks"}

// maxStages bounds the stages of one request.
const maxStages = 20

// stagesOf reads the stages field of v, if set, as PDF operations in
// their order; what is wrong is added to v's errors, naming "stages".
func stagesOf(v *values) []pdftools.Request {
	if !v.has("stages") {
		return nil
	}
	var stages []map[string]any
	d := json.NewDecoder(strings.NewReader(v.str("stages")))
	d.UseNumber()
	if err := d.Decode(&stages); err != nil || len(stages) == 0 || len(stages) > maxStages {
		v.invalid("stages", fmt.Sprintf(`a JSON array of 1 to %d stages, such as [{"op":"merge"},{"op":"rotate","angle":90}]`, maxStages))
		return nil
	}
	var steps []pdftools.Request
	for i, stage := range stages {
		if step, issue := stageStep(stage); issue != "" {
			v.bad = append(v.bad, quire.Detail{Field: "stages", Issue: fmt.Sprintf("stage %d %s", i+1, issue)})
		} else {
			steps = append(steps, step)
		}
	}
	return steps
}

// stageStep is the operation of one stage, or what is wrong with it.
func stageStep(stage map[string]any) (pdftools.Request, string) {
	op, _ := stage["op"].(string)
	i := slices.IndexFunc(pdfRoutes, func(r pdfRoute) bool { return r.path == "/forms/pdf/"+op })
	if !slices.Contains(stageOps, op) || i < 0 {
		return pdftools.Request{}, fmt.Sprintf("('%s') is not supported by quire: its stages are %s", op, strings.Join(stageOps, ", "))
	}
	route, fields := pdfRoutes[i], values{m: map[string][]string{}}
	for k, val := range stage {
		if k == "op" {
			continue
		}
		if !slices.Contains(route.form.served, k) || slices.Contains(route.routeOnly, k) {
			return pdftools.Request{}, fmt.Sprintf("('%s') has a field quire does not take: '%s'", op, k)
		}
		fields.m[k] = []string{fieldText(val)}
	}
	step := pdftools.Request{Op: route.op}
	route.request(&fields, &step)
	if len(fields.bad) > 0 {
		return pdftools.Request{}, fmt.Sprintf("('%s'): '%s' %s", op, fields.bad[0].Field, fields.bad[0].Issue)
	}
	return step, ""
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
	steps := stagesOf(&f.values)
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
