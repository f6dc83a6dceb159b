package signing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/memory/memtest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/store/storetest"
)

const corpusDir = "../../../shared/corpus/pdf"

// document is one input of TestEveryPDFAnswersWithinBounds.
type document struct {
	name string
	pdf  []byte
}

// corpusAndHostile lists the shared PDF corpus (the test is skipped when
// it is absent) and the hostile files of pdftest.
func corpusAndHostile(t *testing.T) []document {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.pdf"))
	if len(files) == 0 {
		t.Skipf("PDF corpus not found at %s (it lives beside the repository in shared/corpus/pdf)", corpusDir)
	}
	var docs []document
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, document{filepath.Base(f), b})
	}
	for _, h := range pdftest.HostileFiles() {
		docs = append(docs, document{"hostile: " + h.Name, h.PDF})
	}
	return docs
}

// TestEveryPDFAnswersWithinBounds signs every corpus and hostile PDF with
// the certificate page on and off, and verifies it. Each call must succeed
// or fail with a *quire.Error (anything else is a 500), and allocate no
// more than the memory bound of one request (pdftest.MemoryBound). It
// counts the process's allocations, so it is not parallel: the parallel
// tests of the package run after it.
func TestEveryPDFAnswersWithinBounds(t *testing.T) {
	docs := corpusAndHostile(t)
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s := New(id, storetest.Open(t, storetest.URL(t, "sqlite")), nil, fetch.New(fetch.Options{MaxBytes: 64 << 20}),
		Options{Certificates: certificates, MaxDocumentBytes: 64 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx := t.Context()
	// The first certificate loads the fonts, once for the process.
	if _, err := s.Sign(ctx, request(pdftest.OnePage("warm up"), "warm-up", true), "key"); err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	var worst int64 // the most allocated beyond 10 times the input, for the log
	var worstName string
	check := func(d document, what string, n uint64) {
		if excess := int64(n) - 10*int64(len(d.pdf)); excess > worst {
			worst, worstName = excess, d.name+" ("+what+")"
		}
		if n > pdftest.MemoryBound(len(d.pdf)) {
			t.Errorf("%s: %s allocated %d bytes for %d, more than %d", d.name, what, n, len(d.pdf), pdftest.MemoryBound(len(d.pdf)))
		}
	}
	for _, d := range docs {
		for _, cert := range []bool{false, true} {
			var err error
			n := pdftest.Allocated(func() {
				// An event of its own: a signed input that gains no page gives
				// the same bytes to sign with the certificate or without.
				_, err = s.Sign(ctx, request(d.pdf, fmt.Sprintf("%s, certificate %v", d.name, cert), cert), "key")
			})
			outcomes[outcome(t, d.name, err)]++
			check(d, fmt.Sprintf("signing, certificate %v", cert), n)
		}
		var err error
		n := pdftest.Allocated(func() { _, err = s.Verify(ctx, Document{Bytes: d.pdf}) })
		outcome(t, d.name, err)
		check(d, "verifying", n)
	}
	t.Logf("signings: %v; most allocated beyond 10 times the input: %d bytes, by %s", outcomes, worst, worstName)
}

func request(pdf []byte, eventID string, certificate bool) Request {
	return Request{Document: Document{Bytes: pdf}, EventID: eventID, Certificate: certificate,
		Signer:     Signer{Name: "Ann", Email: "ann@example.com"},
		AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}}}
}

// outcome checks that err is nil or a *quire.Error and names it.
func outcome(t *testing.T, name string, err error) string {
	t.Helper()
	var qe *quire.Error
	switch {
	case err == nil:
		return "signed"
	case errors.As(err, &qe):
		return string(qe.Code)
	case errors.Is(err, context.Canceled):
		t.Errorf("%s: canceled", name)
	default:
		t.Errorf("%s: %v is no *quire.Error: it would be answered 500", name, err)
	}
	return "error"
}

// TestWidePageTreeStaysWithinTheBudget (issue #32): eight signings at once
// of a PDF whose one /Pages node has 200,000 tiny pages (20 MB, about 650
// MB held to sign it with its certificate page), each charged as the HTTP
// adapter charges it (memory.PerBodyByte times the body first, then its
// shape): each is signed or refused with 503, and the heap stays within
// the 1 GiB budget plus memory.Margin. It watches the process's heap, so
// it is not parallel, like TestEveryPDFAnswersWithinBounds.
func TestWidePageTreeStaysWithinTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("signs 200,000-page PDFs; not in -short")
	}
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s := New(id, storetest.Open(t, storetest.URL(t, "sqlite")), nil, fetch.New(fetch.Options{MaxBytes: 64 << 20}),
		Options{Certificates: certificates, MaxDocumentBytes: 64 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx := quire.WithTenant(t.Context(), "key")
	if _, err := s.Sign(ctx, request(pdftest.OnePage("warm up"), "warm-up", true), "key"); err != nil {
		t.Fatal(err)
	}
	pdf := slices.Clip(pdftest.WidePageTree(200_000)) // read only: Save appends to its own copy
	const budget = 1 << 30
	signed, refused, peak := memtest.AtOnce(t, ctx, memory.NewBudget(budget, 100), 8, int64(len(pdf))*memory.PerBodyByte,
		func(ctx context.Context) error {
			_, err := s.Sign(ctx, request(pdf, "wide", true), "key")
			return err
		})
	t.Logf("signed %d, refused %d; heap peak %d MiB, budget %d MiB + margin %d MiB", signed, refused, peak>>20, budget>>20, memory.Margin>>20)
	if signed == 0 {
		t.Error("no signing was admitted")
	}
	if peak > budget+memory.Margin {
		t.Errorf("heap peak %d MiB, more than the budget (%d MiB) plus the margin (%d MiB)", peak>>20, budget>>20, memory.Margin>>20)
	}
}
