package pdftools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// TestValidateNamesTheBadOption gives requests each wrong in one option
// and wants a VALIDATION_ERROR naming that option, and it alone.
func TestValidateNamesTheBadOption(t *testing.T) {
	t.Parallel()
	pdf := one("in.pdf", []byte("%PDF")) // Validate reads no file
	two := append(slices.Clone(pdf), File{"b.pdf", []byte("%PDF")})
	long := strings.Repeat("x", 128)
	image := append(slices.Clone(pdf), File{"logo.png", nil})
	text := func(at Placement) Request { return Request{Op: OpWatermark, Text: "x", Files: pdf, At: &at} }
	for _, c := range []struct {
		req   Request
		field string
	}{
		{Request{Op: OpRotate, Angle: 90}, "file"},
		{Request{Op: OpRotate, Angle: 90, Files: slices.Repeat(pdf, 21)}, "file"},
		{Request{Op: OpMerge, Files: pdf}, "file"},
		{Request{Op: OpAttach, Files: pdf}, "file"},
		{Request{Op: OpWatermark, Files: pdf}, "file"},
		{Request{Op: OpWatermark, Text: "x", Files: two}, "file"},
		{Request{Op: OpRotate, Angle: 90, Files: two}, "file"},
		{Request{Op: OpAttach, FacturX: true, Files: append(slices.Clone(pdf), File{"invoice.xml", nil})}, "file"},
		{Request{Op: OpRotate, Angle: 45, Files: pdf}, "angle"},
		{Request{Op: OpRotate, Angle: 90, Pages: "1-3,x", Files: pdf}, "pages"},
		{Request{Op: OpRotate, Angle: 90, Pages: "5-2", Files: pdf}, "pages"},
		{Request{Op: OpSplit, Files: pdf}, "ranges"},
		{Request{Op: OpSplit, Every: -1, Files: pdf}, "every"},
		{Request{Op: OpSplit, Every: 2, Unify: true, Files: pdf}, "every"},
		{Request{Op: OpSplit, Ranges: "1-3;4-", Files: pdf}, "ranges"},
		{Request{Op: OpSplit, Ranges: strings.Repeat("1,", maxRanges) + "1", Files: pdf}, "ranges"},
		{Request{Op: OpSplit, Ranges: "0-2", Files: pdf}, "ranges"},
		{Request{Op: OpMetadata, Set: map[string]string{"colour": "red"}, Files: pdf}, "set.colour"},
		{Request{Op: OpMetadata, Set: map[string]string{"title": strings.Repeat("x", maxProperty+1)}, Files: pdf}, "set.title"},
		{Request{Op: OpEncrypt, Files: pdf}, "userPassword"},
		{Request{Op: OpEncrypt, UserPassword: long, Files: pdf}, "userPassword"},
		{Request{Op: OpEncrypt, OwnerPassword: long, Files: pdf}, "ownerPassword"},
		{Request{Op: OpEncrypt, UserPassword: "pw", Allow: []string{"print", "fly"}, Files: pdf}, "allow"},
		{Request{Op: OpWatermark, Text: strings.Repeat("x", maxText+1), Files: pdf}, "text"},
		{Request{Op: OpWatermark, Text: "x", Opacity: 1.5, Files: pdf}, "opacity"},
		{Request{Op: OpWatermark, Text: "x", Angle: 400, Files: pdf}, "angle"},
		{text(Placement{X: math.NaN(), FontSize: 12}), "x"},
		{text(Placement{Y: math.Inf(1), FontSize: 12}), "y"},
		{text(Placement{X: -2 * maxPoints, FontSize: 12}), "x"},
		{text(Placement{}), "fontSize"},
		{text(Placement{FontSize: -3}), "fontSize"},
		{text(Placement{FontSize: math.NaN()}), "fontSize"},
		{text(Placement{FontSize: 12, Color: "red"}), "color"},
		{text(Placement{FontSize: 12, Color: "#ff00zz"}), "color"},
		{text(Placement{FontSize: 12, Color: "#fff"}), "color"},
		{Request{Op: OpWatermark, Files: image, At: &Placement{Width: -1}}, "width"},
		{Request{Op: OpWatermark, Files: image, At: &Placement{Width: 10, Height: math.Inf(1)}}, "height"},
		{Request{Op: OpDelete, Files: pdf}, "pages"},
		{Request{Op: OpDelete, Pages: "0", Files: pdf}, "pages"},
		{Request{Op: OpDelete, Pages: "2", Files: two}, "file"},
		{Request{Op: OpDetach, Files: pdf}, "name"},
		{Request{Op: OpDetach, Name: strings.Repeat("x", maxDetachName+1), Files: pdf}, "name"},
		{Request{Op: OpDetach, Name: "a.txt", Files: two}, "file"},
		{Request{Op: OpAttachments, Files: two}, "file"},
		{Request{Op: OpForm, Files: two}, "file"},
		{Request{Op: OpSetForm, Files: pdf}, "fields"},
		{Request{Op: OpSetForm, Fields: map[string][]string{"": {"x"}}, Files: pdf}, "fields"},
		{Request{Op: OpSetForm, Fields: map[string][]string{"a": {strings.Repeat("x", maxFieldValue+1)}}, Files: pdf}, "fields"},
		{Request{Op: OpSetForm, Fields: map[string][]string{"a": {"\xff"}}, Files: pdf}, "fields"},
		{Request{Op: OpSetForm, Fields: manyFields(maxFormFields + 1), Files: pdf}, "fields"},
		{Request{Op: OpRender, Page: 0, DPI: DefaultDPI, Files: pdf}, "page"},
		{Request{Op: OpRender, Page: DefaultPage, DPI: maxDPI + 1, Files: pdf}, "dpi"},
	} {
		err := c.req.Validate(20)
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.Code != quire.CodeValidation || len(qe.Details) != 1 || qe.Details[0].Field != c.field {
			t.Errorf("%s %+v: %v, want a %s naming %s alone", c.req.Op, c.req, err, quire.CodeValidation, c.field)
		}
	}
	if err := (&Request{Op: "compress", Files: pdf}).Validate(20); quire.ErrorCode(err) != quire.CodeNotFound {
		t.Errorf("an unknown operation: %v, want %s", err, quire.CodeNotFound)
	}
	for _, req := range []Request{
		text(Placement{X: -5, Y: 1e5, FontSize: 0.5, Color: "#A0b1C2"}),
		{Op: OpWatermark, Files: image, At: &Placement{}},
		{Op: OpWatermark, Files: image, At: &Placement{Height: 20}},
	} {
		if err := req.Validate(20); err != nil {
			t.Errorf("a sound placement %+v: %v", *req.At, err)
		}
	}
	for _, op := range gotenbergOnly {
		if slices.Contains(Operations, op) {
			t.Errorf("%s is among the operations of /v1, which would give it a route", op)
		}
	}
}

// TestCheckRefusesWhatDoRefuses: what a job's submission refuses through
// Check is what Do would refuse, with the same code; a sound request
// passes.
func TestCheckRefusesWhatDoRefuses(t *testing.T) {
	s := testService()
	encrypted := do(t, Request{Op: OpEncrypt, UserPassword: "pw", Files: one("in.pdf", pdftest.OnePage("x"))}).Data
	for _, c := range []struct {
		req  Request
		code string
		says string
	}{
		{Request{Op: OpRotate, Angle: 45, Files: one("in.pdf", pdftest.OnePage("x"))}, quire.CodeValidation, "angle"},
		{Request{Op: OpWatermark, Text: "draft \U000F0001", Files: one("in.pdf", pdftest.OnePage("x"))}, quire.CodeValidation, "U+F0001"},
		{Request{Op: OpRotate, Angle: 90, Files: one("notes.txt", []byte("not a PDF"))}, quire.CodeUnprocessable, `"notes.txt" cannot be read`},
		{Request{Op: OpRotate, Angle: 90, Files: one("locked.pdf", encrypted)}, quire.CodeUnprocessable, `"locked.pdf" is encrypted`},
	} {
		checked := s.Check(context.Background(), c.req)
		_, done := s.Do(context.Background(), c.req)
		if quire.ErrorCode(checked) != c.code || !strings.Contains(checked.Error(), c.says) || quire.ErrorCode(done) != c.code {
			t.Errorf("%s of %s: Check %v, Do %v; want %s saying %s from both", c.req.Op, c.req.Files[0].Name, checked, done, c.code, c.says)
		}
	}
	pdf := File{Name: "in.pdf", Data: pdftest.OnePage("x")}
	for _, req := range []Request{
		{Op: OpRotate, Angle: 90, Files: one("in.pdf", pdftest.Generated(3, true, 0))},
		{Op: OpWatermark, Files: []File{pdf, {Name: "stamp.png", Data: encoded(t, solid(4, 4, false), "png")}}},
		{Op: OpAttach, Files: []File{pdf, {Name: "data.csv", Data: []byte("a,b\n")}}},
	} {
		if err := s.Check(context.Background(), req); err != nil {
			t.Errorf("a sound %s: %v", req.Op, err)
		}
	}
}

// TestLimitsOfTheOptions: a service answers the limits it was given, and
// refuses a file over its size limit as too large.
func TestLimitsOfTheOptions(t *testing.T) {
	t.Parallel()
	in := pdftest.Generated(3, false, 0)
	s := New(Options{Limits: pdf.DefaultLimits(), MaxBytes: int64(len(in)) - 1, MaxFiles: 3, Logger: slog.New(slog.DiscardHandler), Worker: testWorker}, nil)
	if s.MaxBytes() != int64(len(in))-1 || s.MaxFiles() != 3 {
		t.Fatalf("MaxBytes %d, MaxFiles %d; want %d, 3", s.MaxBytes(), s.MaxFiles(), len(in)-1)
	}
	err := s.Check(context.Background(), Request{Op: OpRotate, Angle: 90, Files: one("big.pdf", in)})
	if quire.ErrorCode(err) != quire.CodePayloadTooLarge || !strings.Contains(err.Error(), "big.pdf") {
		t.Errorf("a file over MaxBytes: %v, want %s naming it", err, quire.CodePayloadTooLarge)
	}
}

// manyFields are n set-form values, each of a field of its own.
func manyFields(n int) map[string][]string {
	m := map[string][]string{}
	for i := range n {
		m[fmt.Sprintf("f%d", i)] = []string{"x"}
	}
	return m
}
