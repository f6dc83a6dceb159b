package pdftools

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// TestWorkerWithinItsCharge: a request's reservation bounds its worker,
// which answers when the work fits.
func TestWorkerWithinItsCharge(t *testing.T) {
	var log bytes.Buffer
	const charge = 64 << 20
	in := pdftest.Generated(3, false, 0)
	doc, err := pdf.Open(t.Context(), in, pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	res, err := workService(time.Minute, &log).Do(charged(t, t.Context(), charge), Request{Op: OpRotate, Angle: 90, Files: one("in.pdf", in)})
	if err != nil || res.Pages != 3 {
		t.Fatalf("rotate within a charge of %d MiB: %d pages, %v", charge>>20, res.Pages, err)
	}
	// The reservation holds the charge and what open added for the objects.
	if want := fmt.Sprintf("limit_bytes=%d ", charge+int64(doc.ObjectCount())*perObject); !strings.Contains(log.String(), want) {
		t.Fatalf("the worker's log has no %s:\n%s", want, log.String())
	}
}

// TestServiceWithoutWorkerRunsThisProgram: without Options.Worker the
// service starts its own program as the worker, which TestMain serves.
func TestServiceWithoutWorkerRunsThisProgram(t *testing.T) {
	s := New(Options{Limits: pdf.DefaultLimits(), MaxBytes: 50 << 20, MaxFiles: 20, Logger: slog.New(slog.DiscardHandler), Fonts: testFonts}, nil)
	res, err := s.Do(context.Background(), Request{Op: OpRotate, Angle: 180, Files: one("in.pdf", pdftest.Generated(2, false, 0))})
	if err != nil || res.Pages != 2 {
		t.Fatalf("rotate by this program as the worker: %d pages, %v", res.Pages, err)
	}
	qpdfClean(t, res.Data)
}

// TestWorkerStartsNoWorker: a process started as a worker that did not
// serve the task refuses to start workers of its own, which would do the
// same without end.
func TestWorkerStartsNoWorker(t *testing.T) {
	t.Setenv(workerEnv, "1")
	_, err := testService().Do(context.Background(), Request{Op: OpRotate, Angle: 90, Files: one("in.pdf", pdftest.OnePage("x"))})
	if err == nil || !strings.Contains(err.Error(), "started as a PDF worker") {
		t.Fatalf("a PDF operation in a worker's process: %v, want the refusal", err)
	}
}
