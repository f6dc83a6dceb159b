package signing

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// converter is a Converter that converts whatever it is given to a
// one-page PDF, or answers err, and counts what it is asked: it stands
// for the LibreOffice pool, whose checks are safeinput's (tested there
// and through the HTTP API with the real pool).
type converter struct {
	err      error
	checks   int
	converts int
	got      engine.Request
}

func (c *converter) Check(r engine.Request, in []byte) error {
	c.checks++
	c.got = r
	return c.err
}

func (c *converter) ConvertRequest(ctx context.Context, r engine.Request, in []byte) (engine.Result, error) {
	c.converts++
	c.got = r
	if c.err != nil {
		return engine.Result{}, c.err
	}
	return engine.Result{Output: pdftest.OnePage("converted")}, nil
}

// TestDOCXOpenedOnce: a document that is not a PDF goes to the converter
// as it came, once, with the PDF/A asked: the signing service does not
// open or check it itself first (a file that is not even a ZIP package is
// signed when the converter converts it). Its refusals are answered as
// /v1/convert answers them, except that a file that is no DOCX at all is
// neither of the formats signed (400); a job's submission asks the
// converter's checks alone.
func TestDOCXOpenedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, storetest.URL(t, "sqlite"))
	conv := &converter{}
	s := newService(t, db)
	s.conv = conv
	req := signRequest([]byte("PK\x03\x04 not a ZIP package: only the converter would tell"))
	req.PDFA = "PDF/A-2b"
	res, err := s.Sign(ctx, req, "key")
	if err != nil || !res.Converted || res.Pages != 1 {
		t.Fatalf("Sign = %+v, %v; want the converter's PDF signed", res, err)
	}
	want := docxRequest("PDF/A-2b")
	if conv.converts != 1 || conv.checks != 0 || conv.got.From != want.From || conv.got.To != want.To || conv.got.Options.PDFA != want.Options.PDFA {
		t.Errorf("Sign asked the converter %d conversions and %d checks, the last %+v; want one conversion of %+v", conv.converts, conv.checks, conv.got, want)
	}
	if err := s.Check(ctx, req); err != nil || conv.checks != 1 || conv.converts != 1 {
		t.Errorf("Check = %v after %d checks and %d conversions; want one check", err, conv.checks, conv.converts)
	}
	for _, c := range []struct {
		err  error
		code string
	}{
		{fmt.Errorf("%w: declared docx, but it is plain text", engine.ErrInvalidFormat), quire.CodeInvalidFormat},
		{engine.ErrEncrypted, quire.CodeUnprocessable},
		{fmt.Errorf("%w: 30 MiB", engine.ErrTooLarge), quire.CodePayloadTooLarge},
	} {
		conv.err = c.err
		_, signErr := s.Sign(ctx, req, "key")
		checkErr := s.Check(ctx, req)
		for _, err := range []error{signErr, checkErr} {
			var qe *quire.Error
			if !errors.As(err, &qe) || qe.Code != c.code {
				t.Errorf("converter's %v: answered %v, want %s", c.err, err, c.code)
			}
		}
	}
}

// TestDOCXWithoutConverter: without a converter, the signing service
// tells a DOCX from what is no document itself, and refuses to convert it.
func TestDOCXWithoutConverter(t *testing.T) {
	t.Parallel()
	s := newService(t, storetest.Open(t, storetest.URL(t, "sqlite")))
	for _, c := range []struct {
		in   string
		code string
	}{
		{"plain text", quire.CodeInvalidFormat},
		{"PK\x03\x04 a damaged ZIP package", quire.CodeUnprocessable},
	} {
		err := s.Check(context.Background(), signRequest([]byte(c.in)))
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.Code != c.code {
			t.Errorf("%q: %v, want %s", c.in, err, c.code)
		}
	}
}

// signRequest is a valid request to sign doc.
func signRequest(doc []byte) Request {
	return Request{Document: Document{Bytes: doc}, Signer: Signer{Name: "Ann", Email: "ann@example.com"},
		AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Now().UTC()}}}
}
