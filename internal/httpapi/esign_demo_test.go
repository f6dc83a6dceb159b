package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/annotate/annotatetest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestESignDemo replays the official e-sign demo's server: annotate its
// template, fetched by URL from a server on loopback (allowed by the
// private-address opt-in), with six text fields and the drawn signature,
// as a PDF; then sign the returned base64 with the certificate pages its
// browser app asks for as {"enable": true}. pdfsig must accept the result.
func TestESignDemo(t *testing.T) {
	template := annotatetest.Template()
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
		w.Write(template)
	}))
	defer files.Close()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion(), withPrivateFetch())
	key := e.key("demo@example.com")

	values := map[string]string{
		annotatetest.DateID: "November 24, 2026", annotatetest.NameID: "Ann Example", annotatetest.CompanyID: "Example Corp",
		annotatetest.PlanID: "Enterprise", annotatetest.StateID: "California", annotatetest.AddressID: "1 Market Street",
	}
	var fields []any
	for _, f := range annotatetest.TextFields {
		fields = append(fields, map[string]any{"id": f.ID, "type": "text", "value": values[f.ID]})
	}
	fields = append(fields, map[string]any{"id": annotatetest.SignatureID, "type": "signature",
		"value":   "data:image/png;base64," + base64.StdEncoding.EncodeToString(annotatetest.Signature()),
		"options": map[string]any{"bottomLabel": map[string]any{"text": "ip: 127.0.0.1", "color": "#666"}}})
	pdf := filled(t, e.annotate(key, "?to=pdf", map[string]any{"document": map[string]any{"url": files.URL + "/agreement.docx"}, "fields": fields}), "application/pdf")
	text := pdfText(t, pdf)
	for _, f := range annotatetest.TextFields {
		if want := squeeze(f.Label + ": " + values[f.ID]); !strings.Contains(text, want) {
			t.Errorf("%q is not in the PDF's text %q", want, text)
		}
	}

	sign, _ := json.Marshal(map[string]any{
		"document": map[string]any{"base64": base64.StdEncoding.EncodeToString(pdf)},
		"signer":   map[string]any{"name": "Ann Example", "email": "ann@example.com", "ip": "127.0.0.1", "userAgent": "Mozilla/5.0 (X11; Linux x86_64)"},
		"auditTrail": []any{
			map[string]any{"type": "ready", "timestamp": "2026-11-24T10:00:00.000Z"},
			map[string]any{"type": "field_change", "timestamp": "2026-11-24T10:00:05.000Z", "data": map[string]any{"fieldId": annotatetest.NameID, "value": "Ann Example"}},
			map[string]any{"type": "submit", "timestamp": "2026-11-24T10:00:09.000Z"},
		},
		"eventId":     "esign-demo-1",
		"certificate": map[string]any{"enable": true},
	})
	signed := signedPDF(t, e.signPDF(key, string(sign)))
	path := pdftest.WriteTemp(t, signed)
	if got := tool(t, "poppler-utils", "pdfsig", path); !strings.Contains(got, "Signature is Valid.") || !strings.Contains(got, "Total document signed") {
		t.Errorf("pdfsig:\n%s", got)
	}
	// The certificate pages were appended.
	if before, after := pages(t, pdftest.WriteTemp(t, pdf)), pages(t, path); after <= before {
		t.Errorf("%d pages signed, %d annotated: no certificate page", after, before)
	}
}

// pages is the page count pdfinfo reports.
func pages(t *testing.T, path string) int {
	t.Helper()
	out := tool(t, "poppler-utils", "pdfinfo", path)
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Pages:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("pdfinfo gives no page count:\n%s", out)
	return 0
}
