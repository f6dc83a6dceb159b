package convert

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// HTML input is made self-contained before LibreOffice sees it. Its HTML
// import honours the link blocking of profile.go for <img>, but the tests
// found, on LibreOffice 7.4, that it still fetches linked style sheets
// (<link>, from http: and file: URLs alike) and body background images,
// and that a <meta http-equiv="refresh"> makes the import wait until the
// job's time limit kills the worker. Rather than chase such paths one by
// one, sanitizeHTML drops every way for HTML to load something:
//
//   - the elements <link> and <base>, and <meta http-equiv> other than
//     Content-Type (which declares the encoding and must stay);
//   - in any element, the attributes that load a resource (src,
//     background, data, poster, srcset, ...) unless their value is an
//     inline data: URI, and href except on <a> and <area> (which only link).
//
// Tags that need no change pass through byte for byte, so that the
// document's own encoding keeps working.

// loadingAttrs are the attributes through which an element loads a resource.
var loadingAttrs = map[string]bool{
	"src": true, "background": true, "data": true, "poster": true, "srcset": true, "lowsrc": true,
	"dynsrc": true, "codebase": true, "archive": true, "classid": true, "longdesc": true, "usemap": true,
	"profile": true, "manifest": true, "action": true, "formaction": true, "xlink:href": true,
}

// sanitizeHTML returns in without the elements and attributes above.
func sanitizeHTML(in []byte) []byte {
	z := html.NewTokenizer(bytes.NewReader(in))
	out := bytes.NewBuffer(make([]byte, 0, len(in)))
	for {
		tt := z.Next()
		if tt == html.ErrorToken { // end of input: the tokenizer has no size limit set
			return out.Bytes()
		}
		raw := append([]byte(nil), z.Raw()...) // reading the tag reuses Raw's bytes
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			out.Write(raw)
			continue
		}
		tok := z.Token()
		kept, changed := safeAttrs(tok)
		switch {
		case dropElement(tok):
		case changed:
			tok.Attr = kept
			out.WriteString(tok.String())
		default:
			out.Write(raw)
		}
	}
}

// dropElement reports whether the start tag tok is dropped altogether.
func dropElement(tok html.Token) bool {
	switch tok.Data {
	case "link", "base":
		return true
	case "meta":
		for _, a := range tok.Attr {
			if a.Key == "http-equiv" && !strings.EqualFold(strings.TrimSpace(a.Val), "content-type") {
				return true
			}
		}
	}
	return false
}

// safeAttrs returns the attributes of tok that load nothing, and whether
// any was removed.
func safeAttrs(tok html.Token) ([]html.Attribute, bool) {
	kept := make([]html.Attribute, 0, len(tok.Attr))
	for _, a := range tok.Attr {
		key := a.Key
		if a.Namespace != "" {
			key = a.Namespace + ":" + a.Key
		}
		inline := strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "data:")
		loads := loadingAttrs[key] && !inline || key == "href" && tok.Data != "a" && tok.Data != "area"
		if !loads {
			kept = append(kept, a)
		}
	}
	return kept, len(kept) != len(tok.Attr)
}
