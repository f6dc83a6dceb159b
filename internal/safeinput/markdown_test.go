package safeinput

import (
	"strings"
	"testing"
)

func TestMarkdownIsRenderedSafely(t *testing.T) {
	src := "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n" +
		"![remote](http://127.0.0.1:9/x.png) ![local](/etc/passwd) ![inline](data:image/png;base64,iVBORw0KGgo=)\n\n" +
		"<img src=\"http://127.0.0.1:9/raw.png\"><script>alert(1)</script>\n\n[link](javascript:alert(1))\n"
	html, err := markdownToHTML([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out := string(html)
	for _, want := range []string{"<h1>Title</h1>", "<table>", "remote", "local", `<img src="data:image/png;base64,iVBORw0KGgo="`} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered HTML lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"127.0.0.1", "/etc/passwd", "<script", "javascript:"} {
		if strings.Contains(out, bad) {
			t.Errorf("rendered HTML contains %q:\n%s", bad, out)
		}
	}
}
