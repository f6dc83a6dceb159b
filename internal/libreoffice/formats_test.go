package libreoffice

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
	"github.com/quire-dev/quire/internal/ooxml"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/safeinput"
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
// (and the worker's own count, Result.Pages) and for the text of its
// first and last page.
func TestSpreadsheetsAndSlidesMatchColdSoffice(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	requireCalcImpress(t)
	xlsx, pptx := convtest.XLSX(120), convtest.PPTX(4)
	docs := map[string][]byte{
		"table.xlsx":  xlsx,
		"table.ods":   convtest.ODS(120),
		"table.csv":   convtest.CSV(120),
		"table.xls":   sofficeSaveAs(t, xlsx, engine.FromXLSX, engine.FromXLS),
		"slides.pptx": pptx,
		"slides.odp":  convtest.ODP(4),
		"slides.ppt":  sofficeSaveAs(t, pptx, engine.FromPPTX, engine.FromPPT),
	}
	dir := t.TempDir()
	var files []string
	for name, b := range docs {
		files = append(files, filepath.Join(dir, name))
		os.WriteFile(files[len(files)-1], b, 0o600)
	}
	cold := coldPages(t, files)
	for name, in := range docs {
		from := strings.TrimPrefix(filepath.Ext(name), ".")
		if got, err := safeinput.Detect(name, in); got != from {
			t.Errorf("%s: Detect = %q, %v", name, got, err)
		}
		r, err := p.ConvertTimed(context.Background(), in, from)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if r.Cold {
			t.Errorf("%s: converted by the cold soffice, want a warm worker", name)
		}
		if msg := qpdfCheck(t, r.Output); msg != "" {
			t.Errorf("%s: qpdf --check: %s", name, msg)
		}
		pages := pageCount(t, r.Output)
		if want, ok := cold[name]; !ok || pages != want || pages < 3 || r.Pages != int64(pages) {
			t.Errorf("%s: %d pages, cold soffice %d (converted: %v), the worker counted %d; want all equal, and at least 3", name, pages, want, ok, r.Pages)
		}
		first, last := "row 1\n", "row 120\n"
		if strings.HasPrefix(name, "slides") {
			first, last = "Slide 1", "Slide 4"
		}
		if !strings.Contains(pdfText(t, r.Output, 1), first) || !strings.Contains(pdfText(t, r.Output, pages), last) {
			t.Errorf("%s: page 1 does not hold %q or page %d %q", name, first, pages, last)
		}
	}
}

// TestCSVCharsetsAndFormulas: a warm worker reads a CSV in UTF-8, in
// in Windows-1252 alike, splits its fields (quoted ones with
// their commas), and keeps formulas as text.
func TestCSVCharsetsAndFormulas(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	requireCalcImpress(t)
	const text = "city,note\nZürich,\"crème, brûlée\"\nsum,=1+1\n"
	latin1 := []byte(strings.NewReplacer("ü", "\xfc", "è", "\xe8", "û", "\xfb", "é", "\xe9").Replace(text))
	for name, in := range map[string][]byte{"UTF-8": []byte(text), "Windows-1252": latin1} {
		r, err := p.ConvertTimed(context.Background(), in, engine.FromCSV)
		if err != nil || r.Cold {
			t.Errorf("%s: %v (cold %v), want a warm conversion", name, err, r.Cold)
			continue
		}
		got := pdfText(t, r.Output, 1)
		for _, want := range []string{"Zürich", "crème, brûlée", "=1+1"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: page 1 lacks the cell %q:\n%s", name, want, got)
			}
		}
	}
}

// repack returns the package pkg with the parts in changes replaced or
// added.
func repack(pkg []byte, changes map[string]string) []byte {
	z, err := ooxml.Open(pkg, ooxml.Limits{})
	if err != nil {
		panic(err)
	}
	all := map[string]string{}
	for _, name := range z.Names() {
		all[name] = string(z.Head(name, 1<<20))
	}
	for name, body := range changes {
		all[name] = body
	}
	return convtest.Zip(all)
}

// sheetAndSlideResourceDocs are the rows of the resource table
// (resources_test.go) for spreadsheets and presentations: linked
// pictures by URL and by file, and a CSV formula that fetches a URL.
func sheetAndSlideResourceDocs(r refs) []resourceDoc {
	const rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
	pic := func(id, rid string) string {
		return `<p:pic><p:nvPicPr><p:cNvPr id="` + id + `" name="linked"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:link="` + rid +
			`"/><a:stretch><a:fillRect/></a:stretch></p:blipFill><p:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="1905000" cy="1905000"/></a:xfrm>` +
			`<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>`
	}
	pptx := convtest.PPTX(1)
	slide := convtest.PartOf(pptx, "ppt/slides/slide1.xml")
	slide = strings.Replace(slide, `</p:spTree>`, pic("10", "rIdL1")+pic("11", "rIdL2")+`</p:spTree>`, 1)
	pptx = repack(pptx, map[string]string{
		"ppt/slides/slide1.xml": slide,
		"ppt/slides/_rels/slide1.xml.rels": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="` + rel + `slideLayout" Target="../slideLayouts/slideLayout1.xml"/>` +
			`<Relationship Id="rIdL1" Type="` + rel + `image" Target="` + r.http("pptx.png") + `" TargetMode="External"/>` +
			`<Relationship Id="rIdL2" Type="` + rel + `image" Target="` + r.file(r.c.png) + `" TargetMode="External"/></Relationships>`,
	})
	frames := `<draw:frame svg:x="1cm" svg:y="5cm" svg:width="3cm" svg:height="3cm"><draw:image xlink:href="` + r.http("odf.png") + `" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame>` +
		`<draw:frame svg:x="5cm" svg:y="5cm" svg:width="3cm" svg:height="3cm"><draw:image xlink:href="` + r.file(r.c.png) + `" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame>`
	withLinks := func(pkg []byte, anchor, replacement string) []byte {
		content := strings.Replace(convtest.PartOf(pkg, "content.xml"), anchor, replacement, 1)
		content = strings.Replace(content, `xmlns:svg=`, `xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:svg=`, 1)
		return repack(pkg, map[string]string{"content.xml": content})
	}
	odp := withLinks(convtest.ODP(1), `</draw:page>`, frames+`</draw:page>`)
	ods := withLinks(convtest.ODS(1), `<table:table-row>`, `<table:shapes>`+frames+`</table:shapes><table:table-row>`)
	csv := "remote content test,1\n" + `=WEBSERVICE("` + r.http("csv-webservice") + `"),2` + "\n"
	return []resourceDoc{
		{name: "PPTX linked pictures", from: engine.FromPPTX, in: pptx},
		{name: "ODP linked pictures", from: engine.FromODP, in: odp},
		{name: "ODS linked pictures", from: engine.FromODS, in: ods},
		{name: "CSV web service formula", from: engine.FromCSV, in: []byte(csv)},
	}
}

// TestSheetAndSlideRowsReachOut is the control of the rows above: a cold
// soffice with a default profile fetches their linked pictures and embeds
// the canary, so the resource tests would see a leak. (A default soffice
// does not evaluate the CSV's WEBSERVICE formula on import either; that
// row guards against a LibreOffice that would.)
func TestSheetAndSlideRowsReachOut(t *testing.T) {
	requireCalcImpress(t)
	r := refs{l: listen(t), c: canaryPaths(t)}
	r.c.write(t)
	for _, d := range sheetAndSlideResourceDocs(r) {
		if d.from == engine.FromCSV {
			continue
		}
		before := r.l.accepted.Load()
		pdf := sofficeConvert(t, "control."+d.from, d.in)
		r.l.settle(t)
		if r.l.accepted.Load() == before || leaks(t, pdf) == "" {
			t.Errorf("%s: a default soffice neither connected nor embedded the canary: the row shows nothing", d.name)
		}
	}
}
