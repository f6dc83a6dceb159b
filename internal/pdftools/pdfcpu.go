package pdftools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// The operations that rewrite the whole file, done by pdfcpu on the
// bytes quire's reader accepted (repaired, when it had to).

// config is pdfcpu's configuration for files from clients: relaxed
// validation (real files bend the standard), no config directory.
func config() *model.Configuration {
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	return conf
}

func init() { api.DisableConfigDir() }

func (s *Service) merge(ctx context.Context, req Request) (Result, error) {
	conf := config()
	conf.Cmd, conf.CreateBookmarks = model.MERGECREATE, false
	var dest *model.Context
	pages := 0
	for _, f := range req.Files {
		in, err := s.open(ctx, f, req.Op, req.Force)
		if err != nil {
			return Result{}, err
		}
		pages += in.pages
		src, err := api.ReadAndValidate(bytes.NewReader(in.doc.Bytes()), conf)
		if err != nil {
			return Result{}, s.libraryError(f.Name, req.Op, err)
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
		if err := pdfcpu.MergeXRefTables(f.Name, src, dest, false, false); err != nil {
			return Result{}, s.libraryError(f.Name, req.Op, err)
		}
	}
	var out bytes.Buffer
	if err := api.WriteContext(dest, &out); err != nil {
		return Result{}, s.libraryError("", req.Op, err)
	}
	return pdfResult(out.Bytes(), len(req.Files), pages), nil
}

func (s *Service) split(in *input, req Request) (Result, error) {
	spans, err := spansOf(req, in.pages)
	if err != nil {
		return Result{}, err
	}
	pc, err := api.ReadValidateAndOptimize(bytes.NewReader(in.doc.Bytes()), config())
	if err != nil {
		return Result{}, s.libraryError(in.name, req.Op, err)
	}
	res := Result{ContentType: TypeZIP, Documents: 1}
	for _, sp := range spans {
		nums := make([]int, 0, sp[1]-sp[0]+1)
		for p := sp[0]; p <= sp[1]; p++ {
			nums = append(nums, p)
		}
		part, err := pdfcpu.ExtractPages(pc, nums, false)
		if err != nil {
			return Result{}, s.libraryError(in.name, req.Op, err)
		}
		var out bytes.Buffer
		if err := api.WriteContext(part, &out); err != nil {
			return Result{}, s.libraryError(in.name, req.Op, err)
		}
		label := fmt.Sprint(sp[0])
		if sp[1] != sp[0] {
			label += fmt.Sprintf("-%d", sp[1])
		}
		res.Parts = append(res.Parts, Part{Pages: label, Data: out.Bytes()})
		res.Pages += len(nums)
	}
	return res, nil
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

func (s *Service) rotate(in *input, req Request) (Result, error) {
	var out bytes.Buffer
	if err := api.Rotate(bytes.NewReader(in.doc.Bytes()), &out, req.Angle, selection(req.Pages), config()); err != nil {
		return Result{}, s.libraryError(in.name, req.Op, err)
	}
	return pdfResult(out.Bytes(), 1, in.pages), nil
}

// selection is a page selection in pdfcpu's form; nil: every page.
func selection(pages string) []string {
	if pages == "" {
		return nil
	}
	return strings.Split(pages, ",")
}

func (s *Service) encrypt(in *input, req Request) (Result, error) {
	owner := req.OwnerPassword
	if owner == "" { // nobody may lift the permissions
		b := make([]byte, 24)
		rand.Read(b)
		owner = hex.EncodeToString(b)
	}
	conf := model.NewAESConfiguration(req.UserPassword, owner, 256)
	conf.ValidationMode = model.ValidationRelaxed
	conf.Permissions = permissions(req.Allow)
	conf.Cmd = model.ENCRYPT
	pc, err := api.ReadValidateAndOptimize(bytes.NewReader(in.doc.Bytes()), conf)
	if err != nil {
		return Result{}, s.libraryError(in.name, req.Op, err)
	}
	// pdfcpu writes AES-256 as the revision 6 handler of ISO 32000-2 only
	// in a PDF 2.0 file, else as revision 5, Adobe's deprecated extension
	// whose password check is weaker: the output is made PDF 2.0.
	v20 := model.V20
	pc.HeaderVersion = &v20
	if pc.RootVersion != nil {
		pc.RootVersion = &v20
	}
	var out bytes.Buffer
	if err := api.WriteContext(pc, &out); err != nil {
		return Result{}, s.libraryError(in.name, req.Op, err)
	}
	return pdfResult(out.Bytes(), 1, in.pages), nil
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

// imageWatermark puts the image part under the content (over it with
// stamp=true) of the selected pages, rewriting the file.
func (s *Service) imageWatermark(in *input, req Request) (Result, error) {
	desc := fmt.Sprintf("rotation:%d, opacity:%g, scalefactor:0.5 rel", req.Angle, opacity(req))
	wm, err := api.ImageWatermarkForReader(bytes.NewReader(req.Files[1].Data), desc, req.Stamp, false, types.POINTS)
	if err != nil {
		return Result{}, s.libraryError(req.Files[1].Name, req.Op, err)
	}
	var out bytes.Buffer
	if err := api.AddWatermarks(bytes.NewReader(in.doc.Bytes()), &out, selection(req.Pages), wm, config()); err != nil {
		return Result{}, s.libraryError(in.name, req.Op, err)
	}
	return pdfResult(out.Bytes(), 1, in.pages), nil
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
