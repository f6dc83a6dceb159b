package pdftools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/quire-dev/quire"
)

// The operations that rewrite the whole file, done by pdfcpu in a worker
// process (worker.go) on the bytes quire's reader accepted (repaired,
// when it had to). The service's methods prepare the task; the task's
// methods, in the worker, call pdfcpu.

// config is pdfcpu's configuration for files from clients: relaxed
// validation (real files bend the standard), no config directory.
func config() *model.Configuration {
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	return conf
}

// DisableConfigDir makes pdfcpu, in the whole process, read and write no
// configuration directory: by default its first use creates one in the
// user's home, and its settings there would change how files from clients
// are read. Call it once, before the first PDF tool runs (internal/app).
func DisableConfigDir() { api.DisableConfigDir() }

func (s *Service) merge(ctx context.Context, req Request) (Result, error) {
	t := task{Kind: taskMerge, Req: req}
	names := make([]string, len(req.Files))
	pages := 0
	for i, f := range req.Files {
		in, err := s.open(ctx, f, req.Op, req.Force)
		if err != nil {
			return Result{}, err
		}
		pages += in.pages
		t.Inputs, names[i] = append(t.Inputs, in.doc.Bytes()), f.Name
	}
	a, err := s.inWorker(ctx, t, names)
	if err != nil {
		return Result{}, err
	}
	return pdfResult(a.Data, len(req.Files), pages), nil
}

func (s *Service) split(ctx context.Context, in *input, req Request) (Result, error) {
	spans, err := spansOf(req, in.pages)
	if err != nil {
		return Result{}, err
	}
	pages := 0
	for _, sp := range spans {
		pages += sp[1] - sp[0] + 1
	}
	if req.Unify && pages > in.pages+maxRanges {
		return Result{}, quire.Errorf(quire.CodeUnprocessable,
			"ranges %q select %d pages of a document of %d: a PDF of the selection may hold at most %d (its pages and %d more).",
			req.Ranges, pages, in.pages, in.pages+maxRanges, maxRanges)
	}
	a, err := s.inWorker(ctx, task{Kind: taskSplit, Inputs: [][]byte{in.doc.Bytes()}, Spans: spans, Req: req}, []string{in.name})
	if err != nil {
		return Result{}, err
	}
	if req.Unify {
		return pdfResult(a.Parts[0].Data, 1, pages), nil
	}
	return Result{ContentType: TypeZIP, Documents: 1, Parts: a.Parts, Pages: pages}, nil
}

// deletePages is the document without the pages of req.Pages, the
// others in its order: a split of the pages kept into one PDF. A page
// past the last is left out, as ranges are; deleting every page is a
// 400 naming pages.
func (s *Service) deletePages(ctx context.Context, in *input, req Request) (Result, error) {
	deleted, err := chosenPages(req.Pages, in.pages)
	if err != nil {
		return Result{}, err
	}
	kept := keptSpans(deleted, in.pages)
	if len(kept) == 0 {
		return Result{}, quire.Invalid("The PDF delete request is not valid.", quire.Detail{Field: "pages",
			Issue: fmt.Sprintf("%q selects every page of the document (%d), which would leave no page", req.Pages, in.pages)})
	}
	req.Unify = true
	a, err := s.inWorker(ctx, task{Kind: taskSplit, Inputs: [][]byte{in.doc.Bytes()}, Spans: kept, Req: req}, []string{in.name})
	if err != nil {
		return Result{}, err
	}
	return pdfResult(a.Parts[0].Data, 1, in.pages-len(deleted)), nil
}

// keptSpans are the runs of the pages 1 to n not deleted.
func keptSpans(deleted []int, n int) [][2]int {
	gone := make([]bool, n+1)
	for _, p := range deleted {
		gone[p] = true
	}
	var out [][2]int
	for p := 1; p <= n; p++ {
		switch {
		case gone[p]:
		case len(out) > 0 && out[len(out)-1][1] == p-1:
			out[len(out)-1][1] = p
		default:
			out = append(out, [2]int{p, p})
		}
	}
	return out
}

// spansOf returns the page spans of a split: the ranges, or every N pages.
func spansOf(req Request, pages int) ([][2]int, error) {
	if req.Ranges != "" {
		return ranges("ranges", req.Ranges, pages)
	}
	var out [][2]int
	for p := 1; p <= pages; p += req.Every {
		out = append(out, [2]int{p, min(p+req.Every-1, pages)})
	}
	return out, nil
}

// rewrite is the service's operation by the worker's task of one input:
// the result is the PDF it answers.
func (s *Service) rewrite(ctx context.Context, kind string, in *input, req Request, extra ...[]byte) (Result, error) {
	t := task{Kind: kind, Inputs: append([][]byte{in.doc.Bytes()}, extra...), Req: req}
	names := []string{in.name}
	for _, f := range req.Files[1:] {
		names = append(names, f.Name)
	}
	a, err := s.inWorker(ctx, t, names)
	if err != nil {
		return Result{}, err
	}
	return pdfResult(a.Data, 1, in.pages), nil
}

// run calls pdfcpu, in the worker.
func (t task) run() (a answer) {
	a.Failed = -1
	defer func() {
		if r := recover(); r != nil {
			a = answer{Failed: -1, Err: fmt.Sprint("panic: ", r)}
		}
	}()
	var err error
	switch t.Kind {
	case taskMerge:
		a.Data, a.Failed, err = t.merge()
	case taskSplit:
		a.Parts, err = t.split()
	case taskRotate:
		a.Data, err = written(func(w *bytes.Buffer) error {
			return api.Rotate(bytes.NewReader(t.Inputs[0]), w, t.Req.Angle, selection(t.Req.Pages), config())
		})
	case taskEncrypt:
		a.Data, err = t.encrypt()
	case taskWatermark:
		a.Data, a.Failed, err = t.imageWatermark()
	case taskRewrite:
		a.Data, err = rewriteWhole(t.Inputs[0])
	case taskBookmarks:
		a.Data, err = t.readBookmarks()
	case taskSetBookmarks:
		a.Data, err = t.writeBookmarks()
	default:
		err = fmt.Errorf("no task %q", t.Kind)
	}
	if err != nil {
		a.Err = err.Error()
		if a.Failed < 0 {
			a.Failed = 0
		}
	}
	return a
}

// written is what write writes.
func written(write func(w *bytes.Buffer) error) ([]byte, error) {
	var out bytes.Buffer
	err := write(&out)
	return out.Bytes(), err
}

// merge merges the inputs; on failure it names the input pdfcpu refused.
func (t task) merge() ([]byte, int, error) {
	dest, failed, err := mergeAll(t.Inputs, config())
	if err != nil {
		return nil, failed, err
	}
	if err := compact(dest); err != nil {
		return nil, -1, err
	}
	out, err := written(func(w *bytes.Buffer) error { return api.WriteContext(dest, w) })
	return out, -1, err
}

// Merge joins PDFs that quire made itself (a conversion's outputs, merged
// for POST /v1/convert?merge=true), page after page, with the merge of
// POST /v1/pdf/merge (mergeAll) but in this process: unlike clients'
// files, they need no worker to contain them. classic writes a
// cross-reference table and no object streams, as PDF/A-1 requires. A
// single PDF is returned as it is.
func Merge(pdfs [][]byte, classic bool) ([]byte, error) {
	switch len(pdfs) {
	case 0:
		return nil, errors.New("pdftools: no PDF to merge")
	case 1:
		return pdfs[0], nil
	}
	conf := config()
	if classic {
		conf.WriteObjectStream, conf.WriteXRefStream = false, false
	}
	dest, _, err := mergeAll(pdfs, conf)
	if err == nil && conf.OptimizeBeforeWriting {
		err = api.OptimizeContext(dest)
	}
	if err == nil {
		err = compact(dest)
	}
	if err != nil {
		return nil, fmt.Errorf("pdftools: merge: %w", err)
	}
	return written(func(w *bytes.Buffer) error { return api.WriteContext(dest, w) })
}

// mergeAll appends the pages of each input to the first's, read with
// conf; on failure it names the input pdfcpu refused.
func mergeAll(inputs [][]byte, conf *model.Configuration) (*model.Context, int, error) {
	conf.Cmd, conf.CreateBookmarks = model.MERGECREATE, false
	var dest *model.Context
	for i, b := range inputs {
		src, err := api.ReadAndValidate(bytes.NewReader(b), conf)
		if err != nil {
			return nil, i, err
		}
		if dest == nil {
			dest = src
			dest.EnsureVersionForWriting()
			continue
		}
		// pdfcpu's own merge refuses a PDF 2.0 after an older one; the
		// result is PDF 2.0 instead, as the newest of its parts.
		if src.XRefTable.Version() == model.V20 {
			v20 := model.V20
			dest.HeaderVersion, dest.RootVersion = &v20, nil
		}
		if err := pdfcpu.MergeXRefTables(fmt.Sprint(i), src, dest, false, false); err != nil {
			return nil, i, err
		}
	}
	return dest, -1, nil
}

func (t task) split() ([]Part, error) {
	pc, err := api.ReadValidateAndOptimize(bytes.NewReader(t.Inputs[0]), config())
	if err != nil {
		return nil, err
	}
	// Each span is a PDF of its own, or all are one (Unify).
	groups := [][][2]int{t.Spans}
	if !t.Req.Unify {
		groups = groups[:0]
		for _, sp := range t.Spans {
			groups = append(groups, [][2]int{sp})
		}
	}
	var parts []Part
	for _, group := range groups {
		part, err := extract(pc, group)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	return parts, nil
}

// extract is one PDF of the pages of spans, in their order, labelled by
// them ("1-3", "5").
func extract(pc *model.Context, spans [][2]int) (Part, error) {
	var nums []int
	var labels []string
	for _, sp := range spans {
		for p := sp[0]; p <= sp[1]; p++ {
			nums = append(nums, p)
		}
		label := fmt.Sprint(sp[0])
		if sp[1] != sp[0] {
			label += fmt.Sprintf("-%d", sp[1])
		}
		labels = append(labels, label)
	}
	part, err := pdfcpu.ExtractPages(pc, nums, false)
	if err != nil {
		return Part{}, err
	}
	out, err := written(func(w *bytes.Buffer) error { return api.WriteContext(part, w) })
	return Part{Pages: strings.Join(labels, ","), Data: out}, err
}

// selection is a page selection in pdfcpu's form; nil: every page.
func selection(pages string) []string {
	if pages == "" {
		return nil
	}
	return strings.Split(pages, ",")
}

func (s *Service) encrypt(ctx context.Context, in *input, req Request) (Result, error) {
	if req.OwnerPassword == "" { // nobody may lift the permissions
		b := make([]byte, 24)
		rand.Read(b)
		req.OwnerPassword = hex.EncodeToString(b)
	}
	return s.rewrite(ctx, taskEncrypt, in, req)
}

func (t task) encrypt() ([]byte, error) {
	conf := model.NewAESConfiguration(t.Req.UserPassword, t.Req.OwnerPassword, 256)
	conf.ValidationMode = model.ValidationRelaxed
	conf.Permissions = permissions(t.Req.Allow)
	conf.Cmd = model.ENCRYPT
	pc, err := api.ReadValidateAndOptimize(bytes.NewReader(t.Inputs[0]), conf)
	if err != nil {
		return nil, err
	}
	// pdfcpu writes AES-256 as the revision 6 handler of ISO 32000-2 only
	// in a PDF 2.0 file, else as revision 5, Adobe's deprecated extension
	// whose password check is weaker: the output is made PDF 2.0.
	v20 := model.V20
	pc.HeaderVersion = &v20
	if pc.RootVersion != nil {
		pc.RootVersion = &v20
	}
	return written(func(w *bytes.Buffer) error { return api.WriteContext(pc, w) })
}

// rewriteWhole has pdfcpu write the file anew from its catalog, without
// its earlier revisions (and without pdfcpu's optimisation of shared
// resources, which costs more than the rest of the operation: the file
// keeps its own structure).
func rewriteWhole(b []byte) ([]byte, error) {
	pc, err := api.ReadAndValidate(bytes.NewReader(b), config())
	if err != nil {
		return nil, err
	}
	return written(func(w *bytes.Buffer) error { return api.WriteContext(pc, w) })
}

// permissionFlags are the user access permissions (ISO 32000 table 22)
// each name of allow grants.
var permissionFlags = map[string]model.PermissionFlags{
	"print":    model.PermissionPrintRev2 | model.PermissionPrintRev3,
	"copy":     model.PermissionExtract | model.PermissionExtractRev3,
	"modify":   model.PermissionModify,
	"annotate": model.PermissionModAnnFillForm,
	"fill":     model.PermissionFillRev3,
	"assemble": model.PermissionAssembleRev3,
}

// permissions are the flags of allow: none of them when it is empty.
func permissions(allow []string) model.PermissionFlags {
	p := model.PermissionsNone
	for _, a := range allow {
		p |= permissionFlags[a]
	}
	return p
}

// imageWatermark puts the image (the second input) under the content
// (over it with stamp=true) of the selected pages; on failure it names
// the input pdfcpu refused.
func (t task) imageWatermark() ([]byte, int, error) {
	desc := fmt.Sprintf("rotation:%d, opacity:%g, scalefactor:0.5 rel", t.Req.Angle, opacity(t.Req))
	wm, err := api.ImageWatermarkForReader(bytes.NewReader(t.Inputs[1]), desc, t.Req.Stamp, false, types.POINTS)
	if err != nil {
		return nil, 1, err
	}
	out, err := written(func(w *bytes.Buffer) error {
		return api.AddWatermarks(bytes.NewReader(t.Inputs[0]), w, selection(t.Req.Pages), wm, config())
	})
	return out, 0, err
}

// opacity is the watermark's opacity, 0.5 unless given.
func opacity(req Request) float64 {
	if req.Opacity == 0 {
		return 0.5
	}
	return req.Opacity
}

func pdfResult(b []byte, docs, pages int) Result {
	return Result{Data: b, ContentType: TypePDF, Documents: docs, Pages: pages}
}
