package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/signing"
)

// at is 2026-11-22 at hh:mm:ss UTC.
func at(hh, mm, ss int) time.Time { return time.Date(2026, 11, 22, hh, mm, ss, 0, time.UTC) }

// trail is the audit trail of the signed PDF: the submit event's data is
// longer than the page shows.
var trail = []signing.AuditEvent{{Type: "ready", Timestamp: at(9, 59, 0)},
	{Type: "field_change", Timestamp: at(9, 59, 30), Data: map[string]any{"fieldId": "name", "value": "Ann <Example>"}},
	{Type: "submit", Timestamp: at(10, 0, 5), Data: map[string]any{"signature": "data:image/png;base64," + strings.Repeat("A", 400)}}}

// shownTrail is what the page shows of trail.
var shownTrail = []string{"ready 2026-11-22 09:59:00 UTC",
	`field_change 2026-11-22 09:59:30 UTC {"fieldId":"name","value":"Ann <Example>"}`,
	`submit 2026-11-22 10:00:05 UTC {"signature":"data:image/png;base64,` + strings.Repeat("A", 160-36) + "…"}

// signed returns a PDF signed by s for Ann Example, and a copy with one
// signed byte changed.
func signed(t *testing.T, s *apitest.Server) (good, tampered []byte) {
	t.Helper()
	req := signing.Request{Document: signing.Document{Bytes: pdftest.OnePage("Service agreement")},
		Signer: signing.Signer{Name: "Ann Example", Email: "ann@example.com"}, EventID: "evt-web-1", AuditTrail: trail}
	res, err := s.Signing.Sign(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	pdf := res.PDF
	tampered = bytes.Clone(pdf)
	i := bytes.Index(tampered, []byte("Service agreement"))
	tampered[i] = 'X'
	return pdf, tampered
}

func writeFile(t *testing.T, name string, b []byte) string {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVerifyPage(t *testing.T) {
	s := server(t, apitest.Config{MaxBodyBytes: 64 << 10})
	good, tampered := signed(t, s)
	b := newBrowser(t, s.URL)

	// The signed PDF is dropped on the drop zone.
	b.do(chromedp.Navigate(s.URL + "/verify"))
	eval[bool](b, `(() => {
		const bytes = Uint8Array.from(atob(`+js(base64.StdEncoding.EncodeToString(good))+`), c => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], 'signed.pdf', {type: 'application/pdf'}));
		return document.getElementById('drop').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
	})()`)
	b.waitFor("the verdict", `!!document.querySelector('#result .verdict')`)
	if v := b.text("#result .verdict-title"); !strings.HasPrefix(v, "Valid") {
		t.Errorf("verdict %q, want Valid", v)
	}
	for _, want := range []string{"Ann Example", "evt-web-1", "ann@example.com", "Covers the whole document\nyes", "This server's certificate\nyes",
		"Format\nPAdES-BASELINE-B", "Changes after it\nnone", "Examination\n"} {
		if got := b.text("#result"); !strings.Contains(got, want) {
			t.Errorf("the result lacks %q:\n%s", want, got)
		}
	}
	if got := eval[[]string](b, `Array.from(document.querySelectorAll('#result .audit li'), li => li.innerText)`); !slices.Equal(got, shownTrail) {
		t.Errorf("the audit events shown:\n%q\nwant:\n%q", got, shownTrail)
	}
	if !b.requested("/v1/verify") {
		t.Error("the page did not call POST /v1/verify")
	}
	b.screenshot("verify")

	// The tampered copy is chosen with the file input.
	b.do(chromedp.Navigate(s.URL+"/verify"),
		chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{writeFile(t, "tampered.pdf", tampered)}))
	b.waitFor("the verdict", `!!document.querySelector('#result .verdict')`)
	if v := b.text("#result .verdict-title"); v != "Not valid" {
		t.Errorf("verdict of the tampered PDF %q, want Not valid", v)
	}
	if got := b.text("#result"); !strings.Contains(got, "This server's certificate\nnot checked") ||
		!strings.Contains(got, "Examination\nfailed: the signed content was altered (TOTAL_FAILED, HASH_FAILURE)") {
		t.Errorf("the tampered PDF's certificate and examination lines:\n%s", got)
	}
	if b.count("#result .event, #result .audit") != 0 {
		t.Error("a tampered signature is named by the signing record")
	}
	b.screenshot("verify-tampered")
}

// TestVerifyForm is the page without JavaScript: the form posts the file
// to /verify, which renders the result.
func TestVerifyForm(t *testing.T) {
	s := server(t, apitest.Config{MaxBodyBytes: 64 << 10})
	good, tampered := signed(t, s)
	doc, err := pdf.Open(context.Background(), bytes.Clone(good), pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	doc.AppendPages([]pdf.Page{{MediaBox: [4]float64{0, 0, 200, 200}, Content: []byte("0 0 m 10 10 l S")}})
	paged, err := doc.Save()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		pdf    []byte
		status int
		want   string
	}{
		{"signed", good, 200, "Valid: the document is unchanged"},
		{"tampered", tampered, 200, "not checked: the signature itself does not hold"},
		{"tampered, in the examiner's words", tampered, 200, "failed: the signed content was altered (TOTAL_FAILED, HASH_FAILURE)"},
		{"a page added after signing", paged, 200, "page added (content, pages or structure; not permitted)"},
		{"not a PDF", []byte("hello"), 422, "Cannot verify"},
		{"empty", nil, 400, "The file is empty."},
	} {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("file", "x.pdf")
		fw.Write(c.pdf)
		mw.Close()
		res, err := http.Post(s.URL+"/verify", mw.FormDataContentType(), &body)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status || !strings.Contains(string(page), c.want) || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d, want %d with %q:\n%s", c.name, res.StatusCode, c.status, c.want, page)
		}
		if c.name == "signed" && (!strings.Contains(string(page), "evt-web-1") || !slices.Equal(auditItems(t, page), shownTrail)) {
			t.Errorf("the result lacks the signing event or its audit events (want %q):\n%s", shownTrail, page)
		}
	}
}

// auditItems is the text of the page's audit events, as a browser shows it.
func auditItems(t *testing.T, page []byte) []string {
	t.Helper()
	var items []string
	for _, li := range regexp.MustCompile(`(?s)<li>(.*?)</li>`).FindAllSubmatch(page, -1) {
		text := regexp.MustCompile(`<[^>]*>`).ReplaceAll(li[1], nil)
		items = append(items, html.UnescapeString(string(text)))
	}
	return items
}
