package convert

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/convert/convtest"
	"github.com/quire-dev/quire/internal/pdfsign/pdftest"
)

// requireCalcImpress fails the test when LibreOffice's spreadsheet or
// presentation module is missing (LibreOfficeKit then cannot load those
// formats).
func requireCalcImpress(t *testing.T) {
	t.Helper()
	requireLibreOffice(t)
	// libreoffice-calc-nogui lacks Calc's .ui files, without which
	// LibreOfficeKit cannot build a spreadsheet's view and loads none.
	for _, f := range []string{"program/libsclo.so", "program/libsdlo.so", "share/config/soffice.cfg/modules/scalc/ui/inputbar.ui"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(DefaultProgramDir), f)); err != nil {
			t.Fatalf("LibreOffice Calc or Impress is missing (%s); install the Debian packages: apt-get install %s", f, debianPackages)
		}
	}
}

// pdfText returns the text pdftotext finds on page n of pdf.
func pdfText(t *testing.T, pdf []byte, n int) string {
	t.Helper()
	page := strconv.Itoa(n)
	out, err := exec.Command("pdftotext", "-f", page, "-l", page, pdftest.WriteTemp(t, pdf), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext (apt-get install poppler-utils): %v", err)
	}
	return string(out)
}

// TestSpreadsheetsAndSlidesMatchColdSoffice converts spreadsheets and
// presentations made here (XLSX, PPTX, ODS, ODP, CSV, and XLS and PPT
// saved from them by soffice) with a warm worker, and checks each PDF
// against the page count of a cold soffice conversion of the same file
// and for the text of its first and last page.
func TestSpreadsheetsAndSlidesMatchColdSoffice(t *testing.T) {
	requireCalcImpress(t)
	xlsx, pptx := convtest.XLSX(120), convtest.PPTX(4)
	docs := map[string][]byte{
		"table.xlsx":  xlsx,
		"table.ods":   convtest.ODS(120),
		"table.csv":   convtest.CSV(120),
		"table.xls":   sofficeSaveAs(t, xlsx, FromXLSX, FromXLS),
		"slides.pptx": pptx,
		"slides.odp":  convtest.ODP(4),
		"slides.ppt":  sofficeSaveAs(t, pptx, FromPPTX, FromPPT),
	}
	dir := t.TempDir()
	var files []string
	for name, b := range docs {
		files = append(files, filepath.Join(dir, name))
		os.WriteFile(files[len(files)-1], b, 0o600)
	}
	cold := coldPages(t, files)
	p := testPool(t, "lok", Options{Workers: 1})
	for name, in := range docs {
		from := strings.TrimPrefix(filepath.Ext(name), ".")
		if got, err := Detect(name, in); got != from {
			t.Errorf("%s: Detect = %q, %v", name, got, err)
		}
		r, err := p.ConvertTimed(context.Background(), in, from)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if msg := qpdfCheck(t, r.PDF); msg != "" {
			t.Errorf("%s: qpdf --check: %s", name, msg)
		}
		pages := pageCount(t, r.PDF)
		if want, ok := cold[name]; !ok || pages != want || pages < 3 {
			t.Errorf("%s: %d pages, cold soffice %d (converted: %v); want equal, and at least 3", name, pages, want, ok)
		}
		first, last := "row 1\n", "row 120\n"
		if strings.HasPrefix(name, "slides") {
			first, last = "Slide 1", "Slide 4"
		}
		if !strings.Contains(pdfText(t, r.PDF, 1), first) || !strings.Contains(pdfText(t, r.PDF, pages), last) {
			t.Errorf("%s: page 1 does not hold %q or page %d %q", name, first, pages, last)
		}
	}
}
