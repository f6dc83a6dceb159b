package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/annotate/annotatetest"
)

// Settings and goals of the annotate benchmark.
const (
	annotateDuration = 5 * time.Second // the DOCX-out load run
	annotatePDFRuns  = 100             // to=pdf and convert-alone requests, each
	goalAnnotateP50  = 10 * time.Millisecond
	goalPDFOverhead  = 10.0 // % of the conversion alone, at most
)

// annotateBenchmark measures POST /v1/annotate on the e-sign demo's call:
// a 1-page template, six text fields and a drawn signature. DOCX out
// under load from one connection; to=pdf against converting the same
// filled DOCX alone (POST /v1/convert), alternating the two.
func annotateBenchmark() result {
	const title = "Filling a template (POST /v1/annotate)"
	q := startQuire("QUIRE_CONVERT_WORKERS=1", "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1")
	defer q.stop()
	if _, err := waitWorkers(q.url, 1, workersTimeout); err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	key := createKey(q.data)
	body := demoRequest()
	annotateReq := func(query string) request {
		return func(int64) (*http.Request, error) {
			r, err := http.NewRequest("POST", q.url+"/v1/annotate"+query, bytes.NewReader(body))
			if err == nil {
				r.Header.Set("Authorization", "Bearer "+key)
				r.Header.Set("Content-Type", "application/json")
			}
			return r, err
		}
	}
	filled, err := fetchFilled(annotateReq(""))
	if err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: the warm-up request failed: %v.\n", err)}
	}
	docx := q.load(1, annotateDuration, 200, annotateReq(""))

	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	fw, _ := mw.CreateFormFile("file", "filled.docx")
	fw.Write(filled)
	mw.Close()
	conv := convertRequestFunc(q.url+"/v1/convert?from=docx", key, docxFile{name: "filled.docx", data: filled, body: mp.Bytes(), contentType: mw.FormDataContentType()})
	pdfReq := annotateReq("?to=pdf")
	timeOnce(pdfReq) // warm-up, not measured
	timeOnce(conv)
	var pdfLat, convLat []float64
	failures := 0
	for i := 0; i < annotatePDFRuns; i++ {
		for _, c := range []struct {
			next request
			lat  *[]float64
		}{{pdfReq, &pdfLat}, {conv, &convLat}} {
			d, err := timeOnce(c.next)
			if err != nil {
				failures++
				continue
			}
			*c.lat = append(*c.lat, d)
		}
	}

	var tb strings.Builder
	tb.WriteString("| measurement | requests | p50 ms | p95 ms | p99 ms | failures |\n|---|---|---|---|---|---|\n")
	fmt.Fprintf(&tb, "| annotate, DOCX out, 1 connection for %s | %d | %.2f | %.2f | %.2f | %d |\n",
		annotateDuration, docx.requests, ms(docx.p50), ms(docx.p95), ms(docx.p99), docx.failures)
	for _, l := range []struct {
		name string
		v    []float64
	}{{"annotate, to=pdf", pdfLat}, {"convert the filled DOCX alone (POST /v1/convert)", convLat}} {
		if len(l.v) == 0 {
			fmt.Fprintf(&tb, "| %s | 0 | - | - | - | - |\n", l.name)
			continue
		}
		fmt.Fprintf(&tb, "| %s | %d | %.2f | %.2f | %.2f | - |\n", l.name, len(l.v), percentile(l.v, 50), percentile(l.v, 95), percentile(l.v, 99))
	}

	var n strings.Builder
	fmt.Fprintf(&n, "`bin/quire serve` with QUIRE_CONVERT_WORKERS=1. The request is the e-sign demo's: a 1-page template (%d bytes, "+
		"the demo's seven content controls) in base64, six text fields by id and a signature field with a drawn 300x100 PNG "+
		"and a bottom label, so every request composes a signature stamp. DOCX out: one keep-alive connection for %s, latency from "+
		"sending the request to reading the whole JSON answer. to=pdf: %d requests alternating with %d conversions of the filled "+
		"DOCX alone (multipart, POST /v1/convert?from=docx), one at a time, after one unmeasured request of each; %d failed.\n\n",
		len(annotatetest.Template()), annotateDuration, annotatePDFRuns, annotatePDFRuns, failures)
	figs := []figure{goalFigure("DOCX out, 1 connection: p50", fmt.Sprintf("at most %s", goalAnnotateP50), fmt.Sprintf("%.2f ms", ms(docx.p50)),
		docx.requests > 0 && docx.failures == 0 && docx.p50 <= goalAnnotateP50)}
	if len(pdfLat) > 0 && len(convLat) > 0 {
		over := 100 * (percentile(pdfLat, 50) - percentile(convLat, 50)) / percentile(convLat, 50)
		figs = append(figs, goalFigure("to=pdf over the conversion of the filled DOCX alone, p50", fmt.Sprintf("at most %.0f%% more", goalPDFOverhead),
			fmt.Sprintf("%.1f%% (%.2f ms / %.2f ms)", over, percentile(pdfLat, 50), percentile(convLat, 50)), over <= goalPDFOverhead))
	}
	n.WriteString(goalsTable(figs))
	n.WriteString("\nThe machine is shared and the client runs on it too.\n")
	return result{title: title, table: tb.String(), notes: n.String(), figures: figs}
}

// demoRequest is the body of the e-sign demo's annotate call.
func demoRequest() []byte {
	fields := []map[string]any{}
	for _, f := range annotatetest.TextFields {
		fields = append(fields, map[string]any{"id": f.ID, "type": "text", "value": "Bench " + f.Label})
	}
	fields = append(fields, map[string]any{"id": annotatetest.SignatureID, "type": "signature",
		"value":   "data:image/png;base64," + base64.StdEncoding.EncodeToString(annotatetest.Signature()),
		"options": map[string]any{"bottomLabel": map[string]any{"text": "ip: 127.0.0.1", "color": "#666"}}})
	b, _ := json.Marshal(map[string]any{"document": map[string]any{"base64": base64.StdEncoding.EncodeToString(annotatetest.Template())}, "fields": fields})
	return b
}

// fetchFilled sends one annotate request and returns the filled document.
func fetchFilled(next request) ([]byte, error) {
	req, _ := next(0)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("status %d %.300s", res.StatusCode, body)
	}
	var out struct{ Document struct{ Base64 string } }
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(out.Document.Base64)
}

func convertRequestFunc(target, key string, d docxFile) request {
	return func(int64) (*http.Request, error) { return convertRequest(target, key, d) }
}

// timeOnce sends one request and returns its latency in ms; an answer
// other than 200 is an error.
func timeOnce(next request) (float64, error) {
	req, err := next(0)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		return 0, fmt.Errorf("status %d", res.StatusCode)
	}
	return float64(time.Since(t0).Microseconds()) / 1000, nil
}
