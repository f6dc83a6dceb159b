package libreoffice

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// corpusDir holds real DOCX files written by other people (shared/ beside
// the repository; absent on a user's laptop).
const corpusDir = "../../../shared/corpus/docx"

func corpusFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.docx"))
	if len(files) == 0 {
		t.Skipf("no DOCX corpus at %s (it lives in shared/ beside the repository)", corpusDir)
	}
	sort.Strings(files)
	return files
}

// coldPages converts files with one cold `soffice --convert-to pdf` run,
// with the default profile, and returns the page count of each PDF it
// wrote, by base name. Files it could not convert are absent. soffice
// works on copies: it leaves lock files beside the documents it opens, and
// the corpus is shared.
func coldPages(t *testing.T, files []string) map[string]int {
	t.Helper()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "in"), 0o700)
	copies := make([]string, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		copies[i] = filepath.Join(dir, "in", filepath.Base(f))
		if err := os.WriteFile(copies[i], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := soffice(append([]string{"--convert-to", "pdf", "--outdir", filepath.Join(dir, "out")}, copies...)...); err != nil {
		t.Fatalf("cold soffice: %v\n%s", err, out)
	}
	pages := map[string]int{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		pdf, err := os.ReadFile(filepath.Join(dir, "out", name+".pdf"))
		if err == nil {
			pages[filepath.Base(f)] = pageCount(t, pdf)
		}
	}
	return pages
}

var pagesLine = regexp.MustCompile(`(?m)^Pages:\s+(\d+)`)

// pageCount returns the number of pages pdfinfo finds in pdf, or -1.
func pageCount(t *testing.T, pdf []byte) int {
	t.Helper()
	path := pdftest.WriteTemp(t, pdf)
	out, err := exec.Command("pdfinfo", path).Output()
	m := pagesLine.FindSubmatch(out)
	if err != nil || m == nil {
		return -1
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// qpdfCheck returns qpdf --check's complaint about pdf, or "".
func qpdfCheck(t *testing.T, pdf []byte) string {
	t.Helper()
	out, err := exec.Command("qpdf", "--check", pdftest.WriteTemp(t, pdf)).CombinedOutput()
	if err != nil {
		return err.Error() + ": " + string(out)
	}
	return ""
}

// TestCorpusMatchesColdSoffice converts every DOCX of the corpus with two
// warm workers (the shared pool's) and checks each PDF with qpdf and
// against the page count of a cold soffice conversion of the same file,
// which the worker's own count (Result.Pages) must equal. A file soffice cannot
// convert must get ErrUnprocessable or ErrInvalidFormat.
func TestCorpusMatchesColdSoffice(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	files := corpusFiles(t)
	cold := coldPages(t, files)

	var mu sync.Mutex
	var mismatches []string
	work := make(chan string)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				if msg := checkCorpusFile(t, p, f, cold); msg != "" {
					mu.Lock()
					mismatches = append(mismatches, msg)
					mu.Unlock()
				}
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	sort.Strings(mismatches)
	for _, m := range mismatches {
		t.Error(m)
	}
	t.Logf("%d files, %d mismatches", len(files), len(mismatches))
}

// checkCorpusFile converts one file and returns what is wrong, or "".
func checkCorpusFile(t *testing.T, p *Pool, file string, cold map[string]int) string {
	name := filepath.Base(file)
	in, err := os.ReadFile(file)
	if err != nil {
		return name + ": " + err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := p.ConvertTimed(ctx, in, "docx")
	pdf := r.Output
	want, coldOK := cold[name]
	switch {
	case err != nil && !coldOK && (errors.Is(err, engine.ErrUnprocessable) || errors.Is(err, engine.ErrInvalidFormat)):
		return "" // refused, as soffice refused it
	case err != nil:
		return name + ": " + err.Error()
	case !coldOK:
		return name + ": converted, but cold soffice could not convert it"
	}
	if msg := qpdfCheck(t, pdf); msg != "" {
		return name + ": qpdf --check: " + msg
	}
	if got := pageCount(t, pdf); got != want || r.Pages != int64(got) {
		return name + ": " + strconv.Itoa(got) + " pages, cold soffice made " + strconv.Itoa(want) + ", the worker counted " + strconv.FormatInt(r.Pages, 10)
	}
	for _, u := range linkURIs(t, pdf) {
		if strings.Contains(u, p.opts.Dir) {
			return name + ": the PDF links to " + u + ", in the server's files"
		}
	}
	return ""
}
