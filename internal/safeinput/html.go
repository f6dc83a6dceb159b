package safeinput

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/quire-dev/quire/internal/engine"
	"golang.org/x/net/html"
)

// HTML input is made self-contained before LibreOffice sees it. Its HTML
// import honours the link blocking of profile.go for <img>, but the tests
// found, on LibreOffice 7.4, that it still fetches linked style sheets
// (<link>, from http: and file: URLs alike), body background images and
// images named by CSS url(), that an <img> of an inline SVG loads the
// files that SVG links to, and that a <meta http-equiv="refresh"> makes
// the import wait until the job's time limit kills the worker. Rather than
// chase such paths one by one, sanitizeHTML drops every way for HTML to
// load something:
//
//   - the elements <link> and <base>, and <meta http-equiv> other than
//     Content-Type (which declares the encoding and must stay);
//   - in any element, the attributes that load a resource (src,
//     background, data, poster, srcset, ...) unless their value is an
//     inline raster image (a data: URI of PNG, JPEG, GIF, BMP or WebP,
//     which cannot refer to anything), and href except on <a> and <area>
//     (which only link);
//   - in style sheets and style attributes, @import rules and every url()
//     but those of inline raster images (cleanCSS).
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
	inStyle := false // in a <style> element, whose text is CSS
	for {
		tt := z.Next()
		if tt == html.ErrorToken { // end of input: the tokenizer has no size limit set
			return out.Bytes()
		}
		raw := append([]byte(nil), z.Raw()...) // reading the tag reuses Raw's bytes
		if tt == html.TextToken && inStyle {
			out.WriteString(cleanCSS(string(raw)))
			continue
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			if tt == html.EndTagToken {
				inStyle = false
			}
			out.Write(raw)
			continue
		}
		tok := z.Token()
		inStyle = tok.Data == "style" && tt == html.StartTagToken
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
// any was removed or changed.
func safeAttrs(tok html.Token) ([]html.Attribute, bool) {
	kept := make([]html.Attribute, 0, len(tok.Attr))
	changed := false
	for _, a := range tok.Attr {
		key := a.Key
		if a.Namespace != "" {
			key = a.Namespace + ":" + a.Key
		}
		loads := loadingAttrs[key] && !rasterDataURI(a.Val) || key == "href" && tok.Data != "a" && tok.Data != "area"
		switch {
		case loads:
			changed = true
		case key == "style":
			css := cleanCSS(a.Val)
			changed = changed || css != a.Val
			a.Val = css
			kept = append(kept, a)
		default:
			kept = append(kept, a)
		}
	}
	return kept, changed
}

// rasterDataURI reports whether v is a data: URI of a raster image, which
// holds all its content and refers to nothing.
func rasterDataURI(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	for _, t := range []string{"png", "jpeg", "jpg", "gif", "bmp", "webp"} {
		if rest, ok := strings.CutPrefix(v, "data:image/"+t); ok && (strings.HasPrefix(rest, ";") || strings.HasPrefix(rest, ",")) {
			return true
		}
	}
	return false
}

var (
	cssEscape = regexp.MustCompile(`\\(?:([0-9a-fA-F]{1,6})\s?|(.))`)
	cssImport = regexp.MustCompile(`(?i)@import[^;]*;?`)
	cssURL    = regexp.MustCompile(`(?i)url\(\s*(?:"([^"]*)"|'([^']*)'|([^)]*))\s*\)`)
)

// cleanCSS returns the style sheet (or style attribute, or SVG) css
// without @import rules and with url() references other than to inline
// raster images or to fragments of the same document (url(#gradient))
// replaced by none. CSS escapes are decoded first, so that u\72l( is seen
// for the url( it is.
func cleanCSS(css string) string {
	if !strings.Contains(css, "\\") && !strings.Contains(strings.ToLower(css), "url(") && !strings.Contains(strings.ToLower(css), "@import") {
		return css
	}
	css = cssEscape.ReplaceAllStringFunc(css, func(m string) string {
		sub := cssEscape.FindStringSubmatch(m)
		if sub[1] != "" {
			n, _ := strconv.ParseUint(sub[1], 16, 32)
			return string(rune(n))
		}
		return sub[2]
	})
	css = cssImport.ReplaceAllString(css, "")
	return cssURL.ReplaceAllStringFunc(css, func(m string) string {
		sub := cssURL.FindStringSubmatch(m)
		ref := strings.TrimSpace(sub[1] + sub[2] + sub[3])
		if strings.HasPrefix(ref, "#") || rasterDataURI(ref) {
			return m
		}
		return "none"
	})
}

// landscapeCSS turns an HTML document's pages to landscape: LibreOffice's
// HTML import reads the size of a CSS @page rule.
const landscapeCSS = "<style>@page { size: landscape }</style>\n"

// withPageSetup applies the page options of o to an HTML document. The
// rule goes first (after a byte order mark), so that a page size the
// document sets itself wins, as JobOptions.Landscape promises.
func withPageSetup(doc []byte, o engine.JobOptions) []byte {
	if !o.Landscape {
		return doc
	}
	const bom = "\xef\xbb\xbf"
	rest, hasBOM := bytes.CutPrefix(doc, []byte(bom))
	out := make([]byte, 0, len(doc)+len(landscapeCSS))
	if hasBOM {
		out = append(out, bom...)
	}
	return append(append(out, landscapeCSS...), rest...)
}
