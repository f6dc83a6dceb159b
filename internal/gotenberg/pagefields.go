package gotenberg

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
)

// pageFields are the fields of a page's loading that the Chromium and
// screenshot routes honour, beside their own.
var pageFields = []string{"waitDelay", "waitForExpression", "waitForSelector", "emulatedMediaFeatures", "userAgent",
	"failOnHttpStatusCodes", "failOnResourceHttpStatusCodes", "ignoreResourceHttpStatusDomains", "failOnResourceLoadingFailed",
	"failOnConsoleExceptions", "skipNetworkIdleEvent", "skipNetworkAlmostIdleEvent"}

// downloadFields are the fields of the url route's download.
var downloadFields = []string{"extraHttpHeaders", "cookies"}

// DefaultMaxWait is Options.MaxWait's default: chromium's default
// script time limit.
const DefaultMaxWait = 10 * time.Second

// pageExtras are the page's options from Gotenberg's fields, with
// failOnHttpStatusCodes checked (failOnStatus) and the checks of the
// loaded page (failOnConsoleExceptions and the resources'). A wait (the
// network's too: skipNetworkIdleEvent=false) turns the page's scripts on, as javascript=true does on /v1/convert:
// what it waits for is the scripts' doing. A waitDelay must be shorter
// than maxWait, the scripts' time limit, which its load shares.
func pageExtras(v *values, maxWait time.Duration) engine.PageExtras {
	p := engine.PageExtras{WaitForSelector: v.str("waitForSelector"), WaitForExpression: v.str("waitForExpression"),
		UserAgent: v.str("userAgent"), MediaFeatures: mediaFeatures(v), FailOnExceptions: v.bool("failOnConsoleExceptions"),
		FailOnResourceLoading: v.bool("failOnResourceLoadingFailed"), FailOnResourceStatus: statusCodes(v, "failOnResourceHttpStatusCodes"),
		IgnoreResourceDomains: domains(v, "ignoreResourceHttpStatusDomains"),
		WaitNetworkIdle:       !v.boolOr("skipNetworkIdleEvent", true), WaitNetworkAlmostIdle: !v.boolOr("skipNetworkAlmostIdleEvent", true)}
	if v.has("waitDelay") {
		d, err := time.ParseDuration(v.str("waitDelay"))
		switch {
		case err != nil || d < 0:
			v.invalid("waitDelay", "a duration such as 2s or 500ms")
		case d >= maxWait:
			v.bad = append(v.bad, detail("waitDelay", "must be shorter than the time limit of the page's scripts, %v, which its load shares (got '%s')",
				maxWait, v.str("waitDelay")))
		default:
			p.WaitDelay = d
		}
	}
	failOnStatus(v)
	return p
}

// mediaFeatures decodes emulatedMediaFeatures, a JSON array of
// {"name", "value"}.
func mediaFeatures(v *values) []engine.MediaFeature {
	if !v.has("emulatedMediaFeatures") {
		return nil
	}
	var fs []engine.MediaFeature
	if err := decodeStrict(v.str("emulatedMediaFeatures"), &fs); err != nil {
		v.invalid("emulatedMediaFeatures", `a JSON array of name and value, such as [{"name":"prefers-color-scheme","value":"dark"}]`)
	}
	return fs
}

// failOnStatus checks failOnHttpStatusCodes (statusCodes). quire
// prints a page only when its server answered 2xx (the url route's
// fetcher; an uploaded page is answered 200): a list asks for as much
// when it names no 2xx status, and is refused when it does, or when it
// is empty (print error pages).
func failOnStatus(v *values) {
	const name = "failOnHttpStatusCodes"
	codes := statusCodes(v, name)
	issue := ""
	for _, c := range codes {
		if c >= 200 && c < 300 { // 299 stands for every 2xx
			issue = fmt.Sprintf("is not supported by quire with %d: a page is printed when its server answers 2xx, and only then", c)
		}
	}
	if codes != nil && len(codes) == 0 {
		issue = "is not supported by quire empty: a page whose server answers an error status is never printed"
	}
	if issue != "" {
		v.bad = append(v.bad, detail(name, "%s (got '%s')", issue, v.str(name)))
	}
}

// statusCodes decodes the field name, a JSON array of HTTP statuses in
// which an x99 entry stands for x00 to x99 (499: 400 to 499); nil when
// absent or invalid, then noted.
func statusCodes(v *values, name string) []int {
	if !v.has(name) {
		return nil
	}
	codes := []int{}
	if err := json.Unmarshal([]byte(v.str(name)), &codes); err != nil {
		v.invalid(name, "a JSON array of HTTP statuses such as [499,599]")
		return nil
	}
	for _, c := range codes {
		if c < 100 || c > 599 {
			v.bad = append(v.bad, detail(name, "lists %d, which is not an HTTP status (got '%s')", c, v.str(name)))
			return nil
		}
	}
	return codes
}

// domains decodes the field name, a JSON array of domain names, or one
// name, or names separated by commas.
func domains(v *values, name string) []string {
	raw := v.str(name)
	if raw == "" {
		return nil
	}
	var ds []string
	if !strings.HasPrefix(raw, "[") {
		ds = strings.Split(raw, ",")
	} else if err := json.Unmarshal([]byte(raw), &ds); err != nil {
		v.invalid(name, `a JSON array of domain names such as ["example.com"]`)
		return nil
	}
	for i := range ds {
		ds[i] = strings.TrimSpace(ds[i])
	}
	return ds
}

// fetchHeader is the header of the url route's download of rawURL:
// extraHttpHeaders (a JSON object; a value's ";scope=regexp" sends it
// only when rawURL matches), userAgent, and cookies (a JSON array of
// {"name", "value", "domain", "path", "secure"}) whose domain and path
// are rawURL's, as a browser would send them.
func fetchHeader(v *values, rawURL string) http.Header {
	h := http.Header{}
	u, err := url.Parse(rawURL)
	if err != nil {
		return h // the download answers for the url
	}
	if v.has("extraHttpHeaders") {
		extraHeaders(v, h, rawURL)
	}
	if ua := v.str("userAgent"); ua != "" {
		h.Set("User-Agent", ua)
	}
	if v.has("cookies") {
		if c := cookieHeader(v, u); c != "" {
			h.Set("Cookie", c)
		}
	}
	return h
}

// managedHeaders are the headers the fetcher sets itself, or that would
// change what the request is.
var managedHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer",
	"Proxy-Authorization", "Proxy-Connection", "Keep-Alive", "Cookie"}

// extraHeaders adds extraHttpHeaders to h, those scoped to URLs that
// rawURL matches.
func extraHeaders(v *values, h http.Header, rawURL string) {
	const name = "extraHttpHeaders"
	var m map[string]string
	if err := json.Unmarshal([]byte(v.str(name)), &m); err != nil {
		v.invalid(name, `a JSON object of headers such as {"X-Header":"value"}`)
		return
	}
	for k, val := range m {
		val, scope, scoped := strings.Cut(val, ";scope=")
		val = strings.TrimSpace(val)
		switch {
		case !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(val):
			v.bad = append(v.bad, detail(name, "holds '%s', which is not a valid HTTP header", k))
			continue
		case slices.ContainsFunc(managedHeaders, func(m string) bool { return strings.EqualFold(m, k) }):
			v.bad = append(v.bad, detail(name, "holds '%s', which quire's fetcher sets itself (cookies go in 'cookies')", k))
			continue
		}
		if scoped {
			re, err := regexp.Compile(strings.TrimSpace(scope))
			if err != nil {
				v.bad = append(v.bad, detail(name, "holds '%s' with a scope that is not a regular expression", k))
				continue
			}
			if !re.MatchString(rawURL) {
				continue
			}
		}
		h.Set(k, val)
	}
}

// cookie is an entry of the cookies field.
type cookie struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Domain   string `json:"domain"`
	Path     string `json:"path"`
	Secure   bool   `json:"secure"`
	HTTPOnly bool   `json:"httpOnly"`
	SameSite string `json:"sameSite"`
}

// cookieHeader is the Cookie header of a request for u: the cookies
// whose domain is u's host (or a domain it is under) and whose path u's
// is under; a secure one only over HTTPS.
func cookieHeader(v *values, u *url.URL) string {
	const name = "cookies"
	var cs []cookie
	if err := decodeStrict(v.str(name), &cs); err != nil {
		v.invalid(name, `a JSON array of name, value, domain, path, secure, httpOnly and sameSite, such as [{"name":"session","value":"abc","domain":"example.com"}]`)
		return ""
	}
	var sent []string
	for i, c := range cs {
		hc := &http.Cookie{Name: c.Name, Value: c.Value}
		if c.Domain == "" || hc.Valid() != nil || hc.String() != c.Name+"="+c.Value {
			v.bad = append(v.bad, detail(name, "entry %d: a cookie needs a name, a value and a domain, in the characters of a Cookie header", i+1))
			continue
		}
		if forURL(c, u) {
			sent = append(sent, hc.String())
		}
	}
	return strings.Join(sent, "; ")
}

// forURL reports whether a browser would send c with a request for u.
func forURL(c cookie, u *url.URL) bool {
	host, domain := strings.ToLower(u.Hostname()), strings.ToLower(strings.TrimPrefix(c.Domain, "."))
	path, cpath := cmp.Or(u.EscapedPath(), "/"), cmp.Or(c.Path, "/")
	_, ipErr := netip.ParseAddr(host) // an address matches itself only
	return (host == domain || ipErr != nil && strings.HasSuffix(host, "."+domain)) &&
		(path == cpath || strings.HasPrefix(path, strings.TrimSuffix(cpath, "/")+"/")) &&
		(!c.Secure || u.Scheme == "https")
}

// detail is a field's issue, formatted.
func detail(field, issue string, a ...any) quire.Detail {
	return quire.Detail{Field: field, Issue: fmt.Sprintf(issue, a...)}
}

// templates takes the header and footer (header.html, footer.html) out
// of f's files.
func templates(f *form) (header, footer string) {
	kept := f.files[:0]
	for _, file := range f.files {
		switch file.Name {
		case "header.html":
			header = string(file.Data)
		case "footer.html":
			footer = string(file.Data)
		default:
			kept = append(kept, file)
		}
	}
	f.files = kept
	return header, footer
}
