package pdftools

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign"
)

// testFonts are the fonts of every test service, loaded once as a
// server loads them once: a load per call would be counted in the
// memory of the operation it precedes.
var testFonts = certpage.NewLazy(certpage.Options{})

// testService is a service with the default limits of the settings.
func testService() *Service {
	return New(Options{Limits: pdf.DefaultLimits(), MaxBytes: 50 << 20, MaxFiles: 20, RenderMaxPixels: 40_000_000, Timeout: time.Minute,
		Logger: slog.New(slog.DiscardHandler), Fonts: testFonts, Worker: testWorker}, nil)
}

// do runs req on a fresh service and fails the test on an error.
func do(t *testing.T, req Request) Result {
	t.Helper()
	res, err := testService().Do(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", req.Op, err)
	}
	return res
}

// code runs req and returns its error's code ("" without an error).
func code(t *testing.T, req Request) (string, error) {
	t.Helper()
	_, err := testService().Do(context.Background(), req)
	if err == nil {
		return "", nil
	}
	var qe *quire.Error
	if !errors.As(err, &qe) {
		t.Fatalf("%s: %v is not a client error (it would be a 5xx)", req.Op, err)
	}
	return qe.Code, err
}

// tool runs a validator on pdf and returns its output; it fails the test
// when the tool fails.
func tool(t *testing.T, pdfBytes []byte, name string, args ...string) string {
	t.Helper()
	pdftest.RequireTool(t, name, debianPackage(name))
	out, err := exec.Command(name, append(args, pdftest.WriteTemp(t, pdfBytes))...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// debianPackage is the package that installs a validator.
func debianPackage(tool string) string {
	switch tool {
	case "qpdf":
		return "qpdf"
	case "mutool":
		return "mupdf-tools"
	}
	return "poppler-utils"
}

// qpdfClean fails unless qpdf --check finds the file sound.
func qpdfClean(t *testing.T, pdfBytes []byte) {
	t.Helper()
	pdftest.RequireTool(t, "qpdf", "qpdf")
	if out, ok := pdftest.QPDFClean(t, pdfBytes); !ok {
		t.Fatalf("qpdf --check:\n%s", out)
	}
}

// signed returns pdftest's n-page PDF signed by a fresh quire identity.
func signed(t *testing.T, n int) []byte {
	t.Helper()
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := pdf.Open(context.Background(), pdftest.Generated(n, false, 0), pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := pdfsign.Sign(context.Background(), doc, id, pdfsign.Options{Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// signaturesValid fails unless pdfsig finds n signatures, each valid.
func signaturesValid(t *testing.T, pdfBytes []byte, n int) {
	t.Helper()
	pdftest.RequireTool(t, "pdfsig", "poppler-utils")
	out, _ := exec.Command("pdfsig", pdftest.WriteTemp(t, pdfBytes)).CombinedOutput()
	if got := strings.Count(string(out), "Signature Validation: Signature is Valid."); got != n {
		t.Fatalf("pdfsig: %d valid signatures, want %d:\n%s", got, n, out)
	}
}

// corpus returns the files of the shared PDF corpus, found beside the
// repository (or its worktree), skipping when it is absent.
func corpus(t *testing.T) []string {
	t.Helper()
	dir, _ := filepath.Abs(".")
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		files, _ := filepath.Glob(filepath.Join(dir, "shared", "corpus", "pdf", "*.pdf"))
		if len(files) > 0 {
			return files
		}
	}
	t.Skip("the shared PDF corpus (shared/corpus/pdf beside the repository) is absent")
	return nil
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func one(name string, data []byte) []File { return []File{{Name: name, Data: data}} }

// runOut runs a command and returns its output, failing the test when it fails.
func runOut(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func runErr(name string, args ...string) error { return exec.Command(name, args...).Run() }

// asClientError is err as an error of the contract (4xx, or 503).
func asClientError(err error) (*quire.Error, bool) {
	var qe *quire.Error
	return qe, errors.As(err, &qe) && qe.Code != quire.CodeInternal
}

// refusedWithinBound runs req, which carries the hostile file h: it must
// end in a client error (never a 5xx), a refusal when h cannot be
// repaired, within the memory bound of signing.
func refusedWithinBound(t *testing.T, h pdftest.Hostile, req Request) {
	t.Helper()
	var got string
	var err error
	alloc := pdftest.Allocated(func() { got, err = code(t, req) })
	if !h.Repairable && got != quire.CodeUnprocessable && got != quire.CodePayloadTooLarge {
		t.Errorf("%s through %s: %v, want a refusal", h.Name, req.Op, err)
	}
	if bound := pdftest.MemoryBound(len(h.PDF)); alloc > bound {
		t.Errorf("%s through %s allocated %d bytes, more than %d", h.Name, req.Op, alloc, bound)
	}
}
