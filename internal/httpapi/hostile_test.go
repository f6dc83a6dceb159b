package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestHostilePDFs sends each pathological PDF of pdftest to /v1/sign with
// the certificate page and to /v1/verify. Each answer must come before a
// deadline that only a hang would reach: 422 UNPROCESSABLE_DOCUMENT, or for
// a file that can be repaired, a signed document that verifies; each
// request within the memory bound of one request; and the server must
// still answer afterwards.
func TestHostilePDFs(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	key := e.key("ann@example.com")
	// The first certificate loads the fonts, once for the process.
	signedPDF(t, e.signPDF(key, certificateBody(pdftest.OnePage("warm up"), "warm-up")))
	for _, h := range pdftest.HostileFiles() {
		t.Run(h.Name, func(t *testing.T) {
			body := certificateBody(h.PDF, strings.ReplaceAll(h.Name, " ", "-"))
			var r response
			n := pdftest.Allocated(func() {
				r = e.bounded(t, "POST", "/v1/sign", strings.NewReader(body), "Bearer "+key, "application/json")
			})
			t.Logf("sign: %d, body of %d bytes, %d allocated", r.status, len(body), n)
			if n > pdftest.MemoryBound(len(body)) {
				t.Errorf("signing allocated %d bytes for a body of %d, more than %d", n, len(body), pdftest.MemoryBound(len(body)))
			}
			if h.Repairable {
				if res := e.verifyPDF(signedPDF(t, r)); !res.Valid {
					t.Errorf("the repaired, signed file does not verify: %+v", res)
				}
			} else {
				r.errorBody(t, http.StatusUnprocessableEntity, "UNPROCESSABLE_DOCUMENT")
			}

			var form bytes.Buffer
			mw := multipart.NewWriter(&form)
			fw, _ := mw.CreateFormFile("file", "hostile.pdf")
			fw.Write(h.PDF)
			mw.Close()
			n = pdftest.Allocated(func() {
				r = e.bounded(t, "POST", "/v1/verify", &form, "", mw.FormDataContentType())
			})
			if n > pdftest.MemoryBound(form.Len()+len(h.PDF)) {
				t.Errorf("verifying allocated %d bytes for a file of %d", n, len(h.PDF))
			}
			switch r.status {
			case http.StatusOK:
				var res struct{ Valid bool }
				r.json(t, &res)
				if res.Valid {
					t.Error("an unsigned hostile file verifies as valid")
				}
			default:
				r.errorBody(t, http.StatusUnprocessableEntity, "UNPROCESSABLE_DOCUMENT")
			}
			if r := e.bounded(t, "GET", "/v1/health", nil, "", ""); r.status != http.StatusOK {
				t.Fatalf("health after the hostile file: %d %s", r.status, r.body)
			}
		})
	}
}

// certificateBody is a sign request for pdf with the certificate page on.
func certificateBody(pdf []byte, eventID string) string {
	id, _ := json.Marshal(eventID)
	return `{"document":` + inline(pdf) + `,"signer":{"email":"ann@example.com","name":"Ann Example"},
		"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}],"eventId":` + string(id) + `,"certificate":{"enabled":true}}`
}

// bounded makes a request that must be answered within 2 minutes: far
// more than any answer takes, even on a loaded machine under the race
// detector (10 s was not: a watermark outlasted it), so only a hang fails
// it.
func (e *env) bounded(t *testing.T, method, path string, body io.Reader, auth, contentType string) response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: no answer: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return response{res.StatusCode, res.Header, b}
}
