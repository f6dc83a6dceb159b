package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quire-dev/quire/internal/store/storetest"
)

// uploadPage is the hosted document's "Browser upload" sample (POST
// /v1/convert, x-code-samples) in a page: the file comes from a file
// input, the key travels in the Authorization header, and the answer is
// read as a blob. upload reports what the page saw.
const uploadPage = `<!DOCTYPE html>
<html><body>
<input type="file" id="fileInput">
<script>
async function upload(quire, key) {
  const formData = new FormData();
  formData.append('file', fileInput.files[0]);

  const response = await fetch(quire + '/v1/convert?from=docx', {
    method: 'POST',
    headers: { 'Authorization': 'Bearer ' + key },
    body: formData
  });

  const pdf = await response.blob();
  const head = new TextDecoder().decode(await pdf.slice(0, 5).arrayBuffer());
  return { status: response.status, type: pdf.type, size: pdf.size, head: head,
           requestId: response.headers.get('X-Request-Id') || '' };
}
</script>
</body></html>`

// uploadResult is what the page's upload reports.
type uploadResult struct {
	Status    int    `json:"status"`
	Type      string `json:"type"`
	Size      int    `json:"size"`
	Head      string `json:"head"`
	RequestID string `json:"requestId"`
}

// TestBrowserUploadSample runs the hosted document's browser sample in
// headless Chromium, from a page on another origin than quire's (another
// port), against a real quire server with a warm LibreOffice worker: the
// browser's preflight must pass, the PDF must arrive, and an error answer
// must be readable too (its CORS headers present).
func TestBrowserUploadSample(t *testing.T) {
	browser := requireChromium(t)
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion())
	key := e.key("browser@example.com")
	docx := e.convert(key, "from=md&to=docx", "report.md", []byte("# Report\n\nMade for the browser test.\n"))
	if docx.status != 200 {
		t.Fatalf("making a DOCX: %d %s", docx.status, docx.body)
	}
	file := filepath.Join(t.TempDir(), "report.docx")
	if err := os.WriteFile(file, docx.body, 0o600); err != nil {
		t.Fatal(err)
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(uploadPage))
	}))
	defer page.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()

	upload := func(quire, key string) (uploadResult, error) {
		return chromedp.Run(tab, chromedp.Evaluate[uploadResult](`upload(`+jsString(quire)+`, `+jsString(key)+`)`, chromedp.EvalAwaitPromise))
	}
	if err := chromedp.Do(tab, chromedp.Navigate(page.URL), chromedp.SetUploadFiles(chromedp.CSS("#fileInput"), []string{file})); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	res, err := upload(e.URL, key)
	if err != nil {
		t.Fatalf("the page's upload failed (a CORS refusal shows as TypeError: Failed to fetch): %v", err)
	}
	if res.Status != 200 || res.Head != "%PDF-" || res.Type != "application/pdf" || res.Size < 1000 || res.RequestID == "" {
		t.Errorf("the browser got %+v; want 200, a PDF of some size, and the exposed X-Request-Id", res)
	}
	res, err = upload(e.URL, "sd_wrong")
	if err != nil || res.Status != 401 || !strings.HasPrefix(res.Type, "application/json") {
		t.Errorf("with a wrong key the browser got %+v, %v; want a readable 401", res, err)
	}

	// A quire that allows only another origin: the browser itself refuses.
	other := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withCORSOrigins("https://elsewhere.example"))
	if res, err := upload(other.URL, key); err == nil || !strings.Contains(err.Error(), "Failed to fetch") {
		t.Errorf("from an origin that is not allowed the browser got %+v, %v; want Failed to fetch", res, err)
	}
}

// requireChromium returns the path of Debian's chromium, or fails saying
// what to install.
func requireChromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("the browser test needs Chromium: apt-get install chromium (scripts/setup --test installs it)")
	}
	return path
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
