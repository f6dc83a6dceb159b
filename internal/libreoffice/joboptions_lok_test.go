package libreoffice

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
	"github.com/quire-dev/quire/internal/libreoffice/pdfatest"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/safeinput"
)

// TestPDFA converts to each PDF/A version, on the warm workers and on the
// cold soffice, and checks the output with pdfatest, and its pages as
// counted (conformance changes the bytes, not the pages); a plain PDF fails
// the same checks, which shows that they can fail.
func TestPDFA(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	in := convtest.DOCXBody(convtest.Paragraphs(3, "archival"), "")
	for part, version := range engine.PDFAVersions {
		r, err := p.ConvertWith(context.Background(), in, engine.FromDOCX, engine.ToPDF, engine.JobOptions{PDFA: version})
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		pdfatest.Check(t, r.Output, part+1)
		checkPages(t, version, r)
	}
	html := []byte("<!DOCTYPE html><html><body><h1>Minutes</h1><p>The board met.</p></body></html>")
	r, err := p.ConvertWith(context.Background(), html, engine.FromHTML, engine.ToPDF, engine.JobOptions{PDFA: "PDF/A-2b"})
	if err != nil {
		t.Fatal(err)
	}
	pdfatest.Check(t, r.Output, 2)

	rtf := []byte(`{\rtf1\ansi{\fonttbl\f0 Arial;}\f0 word {\*\atrfstart 1}commented{\*\atrfend 1}{\*\atnid A}{\*\atnauthor A}\chatn{\*\annotation{\*\atnref 1}\pard A remark.}\par}`)
	r, err = p.ConvertWith(context.Background(), rtf, engine.FromRTF, engine.ToPDF, engine.JobOptions{PDFA: "PDF/A-2b"})
	if err != nil || !r.Cold {
		t.Fatalf("commented RTF: cold %v, %v; want the cold soffice's PDF", r.Cold, err)
	}
	pdfatest.Check(t, r.Output, 2)
	checkPages(t, "commented RTF, cold", r)

	plain, err := p.Convert(context.Background(), in, engine.FromDOCX)
	if err != nil {
		t.Fatal(err)
	}
	if len(pdfatest.Problems(t, plain, 2)) == 0 {
		t.Error("a plain PDF passes the PDF/A checks: they check nothing")
	}
}

// TestPDFUA: pdfua=true makes a tagged PDF; a plain one is not.
func TestPDFUA(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	in := convtest.DOCXBody(`<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Title</w:t></w:r></w:p>`+convtest.Paragraphs(2, "accessible"), "")
	r, err := p.ConvertWith(context.Background(), in, engine.FromDOCX, engine.ToPDF, engine.JobOptions{PDFUA: true})
	if err != nil {
		t.Fatal(err)
	}
	pdfatest.CheckTagged(t, r.Output)
	plain, err := p.Convert(context.Background(), in, engine.FromDOCX)
	if err != nil {
		t.Fatal(err)
	}
	if info := pdfinfo(t, plain); !regexp.MustCompile(`(?m)^Tagged:\s+no$`).MatchString(info) {
		t.Errorf("a plain PDF is tagged already, so the check above proves nothing:\n%s", info)
	}
}

// TestPageRanges exports parts of a long document of the corpus, and
// refuses a range past its end with a clear answer.
func TestPageRanges(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	in := corpusFile(t, "docx4j__Docx4j_GettingStarted.docx")
	all, err := p.Convert(context.Background(), in, engine.FromDOCX)
	if err != nil {
		t.Fatal(err)
	}
	n := pageCount(t, all)
	if n < 6 {
		t.Fatalf("the document has %d pages; the test needs 6", n)
	}
	for ranges, want := range map[string]int{"1-3,5": 4, "2": 1, "4-" + strconv.Itoa(n+10): n - 3} {
		r, err := p.ConvertWith(context.Background(), in, engine.FromDOCX, engine.ToPDF, engine.JobOptions{PageRanges: ranges})
		if err != nil {
			t.Errorf("pageRanges=%s: %v", ranges, err)
			continue
		}
		if got := pageCount(t, r.Output); got != want {
			t.Errorf("pageRanges=%s: %d pages, want %d", ranges, got, want)
		}
	}
	_, err = p.ConvertWith(context.Background(), in, engine.FromDOCX, engine.ToPDF, engine.JobOptions{PageRanges: strconv.Itoa(n + 1)})
	if !errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "pageRanges") {
		t.Errorf("a range past the last page: %v, want ErrUnprocessable naming pageRanges", err)
	}
}

// TestLandscape turns HTML and Markdown pages to landscape; a DOCX,
// which has a page setup of its own, is refused.
func TestLandscape(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	for from, in := range map[string]string{
		engine.FromHTML:     "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body><h1>Café</h1><p>" + strings.Repeat("A long line. ", 1500) + "</p></body></html>",
		engine.FromMarkdown: "# Café\n\n" + strings.Repeat("A long line. ", 1500) + "\n",
	} {
		for _, landscape := range []bool{false, true} {
			r, err := p.ConvertWith(context.Background(), []byte(in), from, engine.ToPDF, engine.JobOptions{Landscape: landscape})
			if err != nil {
				t.Fatalf("%s landscape=%v: %v", from, landscape, err)
			}
			sizes := pageSizes(t, r.Output)
			if len(sizes) < 2 {
				t.Errorf("%s landscape=%v: %d pages, want several", from, landscape, len(sizes))
			}
			for i, s := range sizes {
				if wide := s[0] > s[1]; wide != landscape {
					t.Errorf("%s landscape=%v: page %d is %.0f x %.0f pt", from, landscape, i+1, s[0], s[1])
				}
			}
			if text := pdftext(t, r.Output); !strings.Contains(text, "Café") {
				t.Errorf("%s landscape=%v: the text lost its encoding: %.80q", from, landscape, text)
			}
		}
	}
	if _, err := p.ConvertWith(context.Background(), convtest.DOCXBody(convtest.Paragraphs(1, "x"), ""), engine.FromDOCX, engine.ToPDF, engine.JobOptions{Landscape: true}); err == nil {
		t.Error("landscape=true on a DOCX was accepted")
	}
}

// TestPassword converts an encrypted document that LibreOffice itself
// saved with a password, and refuses it without the password or with a
// wrong one.
func TestPassword(t *testing.T) {
	p, counters := sharedSerial(t)
	in := encrypted(t, sofficeExport(t, convtest.DOCXBody(convtest.Paragraphs(1, "classified"), ""), "odt"), "odt", "writer8", "s3cret pass")
	if err := safeinput.Check(in, engine.FromODT); !errors.Is(err, engine.ErrEncrypted) {
		t.Fatalf("the test's document is not recognised as encrypted: %v", err)
	}
	r, err := p.ConvertWith(context.Background(), in, engine.FromODT, engine.ToPDF, engine.JobOptions{Password: "s3cret pass", PDFA: "PDF/A-2b"})
	if err != nil {
		t.Fatalf("with the password: %v", err)
	}
	if text := pdftext(t, r.Output); !strings.Contains(text, "classified") || r.Cold {
		t.Errorf("with the password: cold %v, text %q", r.Cold, text)
	}
	pdfatest.Check(t, r.Output, 2)
	if _, err := p.ConvertWith(context.Background(), in, engine.FromODT, engine.ToPDF, engine.JobOptions{}); !errors.Is(err, engine.ErrEncrypted) {
		t.Errorf("without a password: %v, want ErrEncrypted", err)
	}
	_, err = p.ConvertWith(context.Background(), in, engine.FromODT, engine.ToPDF, engine.JobOptions{Password: "wrong"})
	if !errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "password") {
		t.Errorf("with a wrong password: %v, want ErrUnprocessable naming the password", err)
	}
	// The worker is still fine, and loads plain documents as before.
	if _, err := p.Convert(context.Background(), convtest.DOCXBody(convtest.Paragraphs(1, "after"), ""), engine.FromDOCX); err != nil {
		t.Errorf("a plain document after the encrypted ones: %v", err)
	}
	if c := counters(); c.Crashes != 0 || c.Cold != 0 {
		t.Errorf("counters %+v", c)
	}
}

// encrypted saves the document in (of extension ext) with a password,
// through LibreOffice's UNO API (testdata/encrypt.py, which needs
// Debian's python3-uno) and export filter filter.
func encrypted(t *testing.T, in []byte, ext, filter, password string) []byte {
	t.Helper()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "in."+ext), filepath.Join(dir, "out."+ext)
	if err := os.WriteFile(src, in, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script, _ := filepath.Abs("testdata/encrypt.py")
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", script, filepath.Join(DefaultProgramDir, "soffice"), filepath.Join(dir, "profile"), src, dst, filter, password)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // soffice and soffice.bin go with it
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever is left of the office
	if err != nil {
		t.Fatalf("encrypt with LibreOffice (apt-get install python3-uno): %v\n%s", err, out)
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// corpusFile reads a file of the DOCX corpus, or skips the test.
func corpusFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Skipf("corpus file %s absent (the corpus lives in shared/ beside the repository): %v", name, err)
	}
	return b
}

var pageSizeLine = regexp.MustCompile(`(?m)^Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts`)

// pageSizes returns the width and height of each page, in points.
func pageSizes(t *testing.T, pdf []byte) [][2]float64 {
	t.Helper()
	var sizes [][2]float64
	for _, m := range pageSizeLine.FindAllStringSubmatch(pdfinfo(t, pdf, "-f", "1", "-l", "1000"), -1) {
		w, _ := strconv.ParseFloat(m[1], 64)
		h, _ := strconv.ParseFloat(m[2], 64)
		sizes = append(sizes, [2]float64{w, h})
	}
	return sizes
}

func pdfinfo(t *testing.T, pdf []byte, args ...string) string {
	t.Helper()
	out, err := exec.Command("pdfinfo", append(args, pdftest.WriteTemp(t, pdf))...).Output()
	if err != nil {
		t.Fatalf("pdfinfo (apt-get install poppler-utils): %v", err)
	}
	return string(out)
}

func pdftext(t *testing.T, pdf []byte) string {
	t.Helper()
	out, err := exec.Command("pdftotext", pdftest.WriteTemp(t, pdf), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext (apt-get install poppler-utils): %v", err)
	}
	return string(out)
}

// checkPages fails t when the pages an engine counted for r are not
// those of its PDF as pdf.PageCount reads them (the metering's figure
// before the engines counted them), or when it has none.
func checkPages(t *testing.T, what string, r engine.Result) {
	t.Helper()
	if want := pdf.PageCount(r.Output); r.Pages != want || want == 0 {
		t.Errorf("%s: the engine counted %d pages, the PDF has %d", what, r.Pages, want)
	}
}
