package httpapi_test

import (
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/libreoffice/pdfatest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// withChromium lends the server the tests' shared Chromium pool.
func withChromium() envOption {
	return func(c *apitest.Config) { c.ChromiumBrowsers, c.Engines = 1, engines }
}

// TestConvertWithChromium: HTML and Markdown to PDF go to Chromium, with
// the request's other files as the page's; engine=libreoffice and a
// LibreOffice option keep the old path; Chromium's options are refused
// where they cannot apply; /v1/health reports the browsers and their
// version. It counts the pages of its own browsers.
func TestConvertWithChromium(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion(), withConfig(func(c *apitest.Config) {
		c.ChromiumBrowsers, c.OwnChromium = 1, true
	}))
	key := e.key("chromium@example.com")
	page := upload{"page.html", []byte(`<link rel="stylesheet" href="look.css"><p class="a">Hello</p>`)}
	css := upload{"look.css", []byte(`.a::after { content: " Styled" }`)}
	r := e.convertFiles(key, "paper=Letter&margin=1in&printBackground=true", page, css)
	if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("Chromium: %d %s", r.status, r.body)
	}
	if text := strings.Join(pageTexts(t, r.body), " "); !strings.Contains(text, "HelloStyled") {
		t.Errorf("the style sheet was not applied: %q", text)
	}
	if n := e.Chromium.Status().Converted; n != 1 {
		t.Errorf("Chromium converted %d pages, want 1", n)
	}
	// The old path: LibreOffice has no style sheet, and converts each file
	// (PDF/A-1b too: Chromium paints with transparency, which PDF/A-1 forbids).
	for _, query := range []string{"from=html&engine=libreoffice", "from=html&pdfa=PDF/A-1b"} {
		r = e.convert(key, query, "page.html", page.data)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", query, r.status, r.body)
		}
	}
	if n := e.Chromium.Status().Converted; n != 1 {
		t.Errorf("engine=libreoffice or pdfa reached Chromium: %d pages", n)
	}
	for query, want := range map[string]map[string]string{
		"from=html&paper=A4&pdfa=PDF/A-1b":     {"engine": "one engine cannot honour both"},
		"from=html&engine=libreoffice&scale=2": {"engine": "they are Chromium's"},
		"from=docx&paper=A4":                   {"paper": "html and md made into pdf only"},
		"from=md&to=docx&engine=chromium":      {"engine": "pdf only"},
		"from=html&paper=B9&scale=5&margin=1":  {"paper": "must be one of", "scale": "from 0.1 to 2", "margin": "not a length"},
		"from=html&engin=chromium":             {"engin": "did you mean engine?"},
		"from=html&scale=big":                  {"scale": "must be a number"},
	} {
		b := e.convert(key, query, "page.html", page.data).errorBody(t, 400, "VALIDATION_ERROR")
		got := map[string]string{}
		for _, d := range b.Details {
			got[d.Field] = d.Issue
		}
		for field, issue := range want {
			if !strings.Contains(got[field], issue) {
				t.Errorf("%s: detail %s = %q, want %q", query, field, got[field], issue)
			}
		}
	}
	e.convertFiles(key, "merge=true", page, css).errorBody(t, 400, "VALIDATION_ERROR")
	// Markdown that would keep goldmark busy for seconds or minutes in the
	// server's process: refused before it by the bounds of the text (the
	// message names their setting), and before the browser.
	for name, md := range map[string]string{
		"100,000 nested quotes": strings.Repeat(">", 100_000) + " x\n",
		"a table of 50,000 columns": "|" + strings.Repeat(" a |", 50_000) + "\n|" + strings.Repeat("---|", 50_000) + "\n|" +
			strings.Repeat(" b |", 50_000) + "\n",
	} {
		b := e.convert(key, "from=md", "big.md", []byte(md)).errorBody(t, 422, "UNPROCESSABLE_DOCUMENT")
		if !strings.Contains(b.Message, "(QUIRE_CONVERT_MAX_") {
			t.Errorf("%s: %q, want the refusal of the text's bounds", name, b.Message)
		}
	}
	if st := e.Chromium.Status(); st.Converted+st.Failed != 1 {
		t.Errorf("Markdown over the limits reached Chromium: %+v", st.Counters)
	}

	var h struct {
		Checks  map[string]string
		Engines map[string]string
	}
	e.do("GET", "/v1/health", nil, nil).json(t, &h)
	if !strings.HasPrefix(h.Checks["chromium"], "1/1 browsers ready") || !strings.Contains(h.Engines["chromium"], "Chrome/") {
		t.Errorf("health: %+v", h)
	}
	metrics := string(e.do("GET", "/metrics", nil, nil).body)
	if !strings.Contains(metrics, "quire_chromium_converted_total 1") {
		t.Errorf("/metrics lacks the Chromium pool's count")
	}
	// PDF/A-2b and PDF/UA-1 print with Chromium, made conformant after it.
	if r = e.convert(key, "from=html&pdfa=PDF/A-2b&pdfua=true", "page.html", page.data); r.status != 200 {
		t.Fatalf("PDF/A-2b and PDF/UA-1 from HTML: %d %s", r.status, r.body)
	}
	if n := e.Chromium.Status().Converted; n != 2 {
		t.Errorf("PDF/A-2b and PDF/UA-1 from HTML did not print with Chromium: %d pages", n)
	}
	pdfatest.Check(t, r.body, 2)
}
