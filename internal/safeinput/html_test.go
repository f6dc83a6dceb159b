package safeinput

import "testing"

func TestSanitizeHTML(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{ // kept byte for byte, encoding declaration and all
			"<!DOCTYPE html><html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\"><style>p { color: red }</style></head>" +
				"<body><p>caf\xe9 &amp; <b>bold</b> <a href=\"https://example.com/\">link</a></p><img src=\"data:image/png;base64,AAAA\" alt=x>" +
				"<script>var a = \"<link>\";</script></body></html>", ""},
		{"<head><META HTTP-EQUIV=\"Refresh\" CONTENT=\"0; url=http://127.0.0.1:9/\"><LINK rel=stylesheet href=\"http://127.0.0.1:9/s.css\"/><base href=\"http://127.0.0.1:9/\"></head>",
			"<head></head>"},
		{"<body background=\"http://127.0.0.1:9/b.png\" bgcolor=white><img src=\"file:///etc/passwd\" alt=\"a &amp; b\"><video poster=x src=y></video></body>",
			"<body bgcolor=\"white\"><img alt=\"a &amp; b\"><video></video></body>"},
		{"<svg><image href=\"http://127.0.0.1:9/i.png\"/></svg>", "<svg><image/></svg>"},
		{"<style>@import url(a.css); body { background: url( 'http://127.0.0.1:9/b.png' ) } p { background: u\\72 l(file:///etc/x.png) } i { background: url(#g) }</style>",
			"<style> body { background: none } p { background: none } i { background: url(#g) }</style>"},
		{"<p style=\"background-image:url(file:///x.png)\">x</p><img src=\"data:image/svg+xml;base64,PHN2Zz4=\">",
			"<p style=\"background-image:none\">x</p><img>"},
	} {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := string(sanitizeHTML([]byte(c.in))); got != want {
			t.Errorf("sanitizeHTML(%q):\n got %q\nwant %q", c.in, got, want)
		}
	}
}
