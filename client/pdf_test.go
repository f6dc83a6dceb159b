package client_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/quire-dev/quire/client"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

func TestPDFOperations(t *testing.T) {
	s := startQuire(t, nil)
	ctx := ctxFor(t)
	c := s.keyed(t, ctx, "ann@example.com")

	merged, err := c.PDF(ctx, "merge", client.PDFOptions{},
		client.PDFFile{Name: "/home/ann/a.pdf", Content: bytes.NewReader(pdftest.OnePage("Alpha"))},
		client.PDFFile{Name: "b.pdf", Content: bytes.NewReader(pdftest.Generated(2, false, 0))})
	if err != nil || merged.ContentType != "application/pdf" || !bytes.HasPrefix(merged.Body, []byte("%PDF-")) {
		t.Fatalf("merge: %v %+v", err, merged)
	}
	meta, err := c.PDF(ctx, "metadata", client.PDFOptions{}, client.PDFFile{Name: "m.pdf", Content: bytes.NewReader(merged.Body)})
	if err != nil || meta.ContentType != "application/json" || !strings.Contains(string(meta.Body), `"pages":3`) {
		t.Fatalf("metadata: %v %s", err, meta.Body)
	}
	_, err = c.PDF(ctx, "rotate", client.PDFOptions{Angle: 45}, client.PDFFile{Name: "a.pdf", Content: bytes.NewReader(merged.Body)})
	if client.ErrorCode(err) != "VALIDATION_ERROR" {
		t.Errorf("a bad angle: %v", err)
	}
}
