package main

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// Settings of the PDF tools benchmark.
const (
	pdfRuns        = 9                      // timed runs of each side, alternating
	pdfCorpus      = "../shared/corpus/pdf" // relative to the repository root
	pdfMergeFiles  = 10
	goalPDFToolsRt = 2.0 // quire's median over qpdf's, at most
)

// pdfMergeSet are the corpus PDFs merged: files of several producers,
// not encrypted, of varied sizes, that qpdf --check passes (the book
// with warnings only). pypdf-samples__cmyk-image.pdf is left out: pdfcpu
// fails to write a merge where it is not the first file (422).
var pdfMergeSet = []string{
	"pypdf-samples__GeoTopo-komprimiert.pdf", "pypdf-samples__mistitled_outlines_example.pdf", "pypdf-samples__google-doc-document.pdf",
	"pypdf-samples__multicolumn.pdf", "pypdf-samples__pdflatex-image.pdf", "pypdf-samples__pdflatex-4-pages.pdf",
	"pypdf-samples__002-trivial-libre-office-writer.pdf", "pypdf-samples__pdfkit.pdf", "qpdf__11-pages.pdf", "pdf20__Simple_PDF_2.0_file.pdf",
}

// pdfToolsBenchmark times POST /v1/pdf/merge of 10 corpus PDFs and POST
// /v1/pdf/watermark of a 5 MB PDF against qpdf doing the same
// (--empty --pages ..., and --overlay of a one-page stamp on every page),
// each side timed in turn, in the same run. quire's time includes HTTP on
// loopback; qpdf's its process start.
func pdfToolsBenchmark() result {
	const title = "PDF tools against qpdf (POST /v1/pdf/merge, /v1/pdf/watermark)"
	dir, err := os.MkdirTemp("", "quire-bench-pdf-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	var merge []string
	for _, name := range pdfMergeSet {
		merge = append(merge, filepath.Join(pdfCorpus, name))
	}
	// Three copies of a 117-page, 1.8 MB book: 351 pages, about 4.7 MB
	// (copies under other names: qpdf shares the objects of one file).
	geo, err := os.ReadFile(merge[0])
	must(err)
	args := []string{"--empty", "--pages"}
	for i := range 3 {
		copy := filepath.Join(dir, fmt.Sprintf("book%d.pdf", i))
		must(os.WriteFile(copy, geo, 0o600))
		args = append(args, copy)
	}
	big := filepath.Join(dir, "big.pdf")
	must(exec.Command("qpdf", append(args, "--", big)...).Run())
	stamp := filepath.Join(dir, "stamp.pdf")
	os.WriteFile(stamp, pdftest.OnePage("DRAFT"), 0o600)

	q := startQuire("QUIRE_CONVERT_WORKERS=-1")
	defer q.stop()
	key := createKey(q.data)
	var table strings.Builder
	table.WriteString("| operation | input | quire p50 ms | qpdf p50 ms | quire / qpdf | goal |\n|---|---|---|---|---|---|\n")
	var notes strings.Builder
	var figs []figure
	for _, c := range []struct {
		name, query string
		files       []string
		qpdf        []string
	}{
		{"merge", "", merge, append(append([]string{"--empty", "--pages"}, merge...), "--", filepath.Join(dir, "merged.pdf"))},
		{"watermark", "text=DRAFT", []string{big}, []string{big, "--overlay", stamp, "--to=1-z", "--repeat=1", "--", filepath.Join(dir, "marked.pdf")}},
	} {
		body, ctype := multipartFiles(c.files)
		var quire, qpdf []time.Duration
		for i := 0; i < pdfRuns+1; i++ { // the first of each: warm-up, not counted
			t0 := time.Now()
			status := postPDF(q.url+"/v1/pdf/"+c.name+"?"+c.query, key, ctype, body)
			d := time.Since(t0)
			if status != 200 {
				panic(fmt.Sprintf("bench: %s answered %d", c.name, status))
			}
			t0 = time.Now()
			must(exec.Command("qpdf", c.qpdf...).Run())
			if i > 0 {
				quire, qpdf = append(quire, d), append(qpdf, time.Since(t0))
			}
		}
		qm, pm := medianDuration(quire), medianDuration(qpdf)
		ratio := float64(qm) / float64(pm)
		met := "met"
		if ratio > goalPDFToolsRt {
			met = "not met"
		}
		size := 0
		for _, f := range c.files {
			st, _ := os.Stat(f)
			size += int(st.Size())
		}
		fmt.Fprintf(&table, "| %s | %d files, %.1f MB | %.1f | %.1f | %.2f | %s (at most %.0fx) |\n", c.name, len(c.files), float64(size)/1e6, ms(qm), ms(pm), ratio, met, goalPDFToolsRt)
		figs = append(figs, goalFigure(fmt.Sprintf("%s (%d files, %.1f MB): quire's median over qpdf's", c.name, len(c.files), float64(size)/1e6),
			fmt.Sprintf("at most %.0fx", goalPDFToolsRt), fmt.Sprintf("%.1f ms / %.1f ms = %.2f", ms(qm), ms(pm), ratio), ratio <= goalPDFToolsRt))
	}
	notes.WriteString(fmt.Sprintf("Medians of %d runs each, quire and qpdf in turn. quire's time is the whole HTTP request on loopback (the upload, "+
		"the read of every object within the signing limits, pdfcpu's work, the answer); qpdf's is the whole process, started each time. "+
		"The 5 MB PDF is three copies of the corpus's 117-page GeoTopo book (351 pages); qpdf overlays a one-page stamp on every page, "+
		"quire draws its text watermark under every page's content.\n", pdfRuns))
	return result{title: title, table: table.String(), notes: notes.String(), figures: figs}
}

func multipartFiles(paths []string) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		must(err)
		w, _ := mw.CreateFormFile("file", filepath.Base(p))
		w.Write(data)
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

func postPDF(url, key, ctype string, body []byte) int {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", ctype)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
