package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/signing"
)

// signed returns a PDF signed by s for Ann Example, and a copy with one
// signed byte changed.
func signed(t *testing.T, s *apitest.Server) (good, tampered []byte) {
	t.Helper()
	req := signing.Request{Document: signing.Document{Bytes: pdftest.OnePage("Service agreement")},
		Signer: signing.Signer{Name: "Ann Example", Email: "ann@example.com"}, EventID: "evt-web-1",
		AuditTrail: []signing.AuditEvent{{Type: "submit", Timestamp: time.Now().UTC()}}}
	pdf, err := s.Signing.Sign(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
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

	b.do(chromedp.Navigate(s.URL+"/verify"),
		chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{writeFile(t, "signed.pdf", good)}))
	b.waitFor("the verdict", `!!document.querySelector('#result .verdict')`)
	if v := b.text("#result .verdict-title"); !strings.HasPrefix(v, "Valid") {
		t.Errorf("verdict %q, want Valid", v)
	}
	for _, want := range []string{"Ann Example", "evt-web-1", "ann@example.com", "Covers the whole document\nyes", "This server's certificate\nyes"} {
		if got := b.text("#result"); !strings.Contains(got, want) {
			t.Errorf("the result lacks %q:\n%s", want, got)
		}
	}
	if !b.requested("/v1/verify") {
		t.Error("the page did not call POST /v1/verify")
	}
	b.screenshot("verify")

	// The tampered copy is dropped on the drop zone.
	b.do(chromedp.Navigate(s.URL + "/verify"))
	eval[bool](b, `(() => {
		const bytes = Uint8Array.from(atob(`+js(base64.StdEncoding.EncodeToString(tampered))+`), c => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], 'tampered.pdf', {type: 'application/pdf'}));
		return document.getElementById('drop').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
	})()`)
	b.waitFor("the verdict", `!!document.querySelector('#result .verdict')`)
	if v := b.text("#result .verdict-title"); v != "Not valid" {
		t.Errorf("verdict of the tampered PDF %q, want Not valid", v)
	}
	if got := b.text("#result"); !strings.Contains(got, "This server's certificate\nnot checked") {
		t.Errorf("the tampered PDF's certificate line:\n%s", got)
	}
	if b.count("#result .event") != 0 {
		t.Error("a tampered signature is named by the signing record")
	}
	b.screenshot("verify-tampered")
}

// TestVerifyForm is the page without JavaScript: the form posts the file
// to /verify, which renders the result.
func TestVerifyForm(t *testing.T) {
	s := server(t, apitest.Config{MaxBodyBytes: 64 << 10})
	good, tampered := signed(t, s)
	for _, c := range []struct {
		name   string
		pdf    []byte
		status int
		want   string
	}{
		{"signed", good, 200, "Valid: the document is unchanged"},
		{"tampered", tampered, 200, "not checked: the signature itself does not hold"},
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
		if c.name == "signed" && !strings.Contains(string(page), "evt-web-1") {
			t.Errorf("the result lacks the signing event:\n%s", page)
		}
	}
}
