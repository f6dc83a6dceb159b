package pdfsign

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// endsAfter is a context that ends after n looks at its Err: the work
// that looks at it stops midway, where a cancelled context would stop it
// before it begins.
type endsAfter struct {
	context.Context
	n     int32
	looks atomic.Int32
}

func (c *endsAfter) Err() error {
	if c.looks.Add(1) > c.n {
		return context.Canceled
	}
	return nil
}

// TestVerifyStopsWhenItsContextEnds (issue #32): a verification whose
// context ends between two signatures, or in the middle of a page tree of
// 5,000 pages, stops there with the context's error.
func TestVerifyStopsWhenItsContextEnds(t *testing.T) {
	id := testIdentity(t)
	signed := pdftest.Generated(2, false, 0)
	for range 2 {
		var err error
		if signed, _, err = signBytes(context.Background(), signed, id, Options{Name: "Jane Doe"}); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := VerifyContext(context.Background(), signed, VerifyOptions{Roots: id.Roots()}, pdf.Limits{}); err != nil || len(res.Signers) != 2 {
		t.Fatalf("verify: %v, %d signatures; want 2", err, len(res.Signers))
	}
	for _, c := range []struct {
		what string
		pdf  []byte
	}{
		{"after the first of two signatures", signed},
		{"within a page tree of 5,000 pages", pdftest.WidePageTree(5000)},
	} {
		ctx := &endsAfter{Context: context.Background(), n: 1}
		if res, err := VerifyContext(ctx, c.pdf, VerifyOptions{Roots: id.Roots()}, pdf.Limits{}); !errors.Is(err, context.Canceled) {
			t.Errorf("context ended %s: %v, %d signatures; want context.Canceled", c.what, err, len(res.Signers))
		}
	}
}

// TestSignStopsWhenItsContextEnds (issue #32): a signing whose context
// ends while it walks a page tree of 5,000 pages stops with its error.
func TestSignStopsWhenItsContextEnds(t *testing.T) {
	d, err := pdf.Open(context.Background(), pdftest.WidePageTree(5000), pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &endsAfter{Context: context.Background(), n: 1}
	if _, _, err := Sign(ctx, d, testIdentity(t), Options{Name: "Jane Doe"}); !errors.Is(err, context.Canceled) {
		t.Errorf("signing whose context ended within the page tree: %v, want context.Canceled", err)
	}
}
