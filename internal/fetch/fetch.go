// Package fetch downloads documents from URLs that API clients supply (the
// document.url of POST /v1/sign) without letting those URLs reach inside
// our network: no loopback, private, link-local (cloud metadata), CGNAT or
// otherwise non-public address, whether named directly, through DNS, by
// DNS rebinding or by a redirect.
//
// The address check runs in the dialer, on the very address connected to,
// for every connection including each redirect hop, so a name cannot
// resolve to one address when checked and another when used.
//
// # Errors for the HTTP layer
//
//   - ErrInvalidURL: the URL itself is unacceptable (not http or https, no
//     host, credentials in it, unparsable). Answer 400 VALIDATION_ERROR on
//     field document.url; its text is safe to show.
//   - ErrForbiddenAddress, ErrUnreachable, ErrTimeout, ErrTooManyRedirects,
//     ErrBadRedirect, ErrTooLarge, ErrStatus: the download failed. Answer
//     422. Give ErrForbiddenAddress and ErrUnreachable the same client
//     message ("document.url could not be downloaded"), so that answers
//     cannot be used to map which internal names exist; log the full error.
//   - An error wrapping context.Canceled or context.DeadlineExceeded comes
//     from the caller's own context (the client went away, or the request
//     deadline passed), not from the download.
package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"
)

// Refusals and failures; see the package comment for their HTTP mapping.
// Returned errors wrap exactly one of these (test with errors.Is). Their
// texts never hold the URL, which may carry secrets in its query.
var (
	ErrInvalidURL       = errors.New("fetch: invalid document URL")
	ErrForbiddenAddress = errors.New("fetch: host is not on the public internet")
	ErrUnreachable      = errors.New("fetch: host could not be reached")
	ErrTimeout          = errors.New("fetch: download took too long")
	ErrTooManyRedirects = errors.New("fetch: too many redirects")
	ErrBadRedirect      = errors.New("fetch: redirect to an unacceptable URL")
	ErrTooLarge         = errors.New("fetch: document too large")
	ErrStatus           = errors.New("fetch: server answered with an error status")
)

// Defaults for the zero Options fields.
const (
	DefaultMaxBytes     = 25 << 20
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 5
)

// Per-stage bounds, so that one slow stage fails with a clear timeout even
// when Options.Timeout is generous.
const (
	dialTimeout   = 10 * time.Second
	tlsTimeout    = 10 * time.Second
	headerTimeout = 20 * time.Second
	maxHeaderSize = 64 << 10
)

const userAgent = "quire-fetch (+https://github.com/quire-dev/quire)"

// Options configure a Fetcher. Zero or negative numbers take the defaults.
type Options struct {
	MaxBytes     int64         // largest body accepted; larger is ErrTooLarge (default 25 MiB)
	Timeout      time.Duration // bound on the whole download, body included (default 30 s)
	MaxRedirects int           // redirects followed; one more is ErrTooManyRedirects (default 5)
	// AllowPrivate lets downloads reach loopback, private and every other
	// non-public address. For development only (documents served from the
	// developer's machine); it turns the SSRF protection off and must
	// never be set in production. It relaxes nothing else.
	AllowPrivate bool
	Resolver     *net.Resolver // nil: net.DefaultResolver
}

// Fetcher downloads documents. It is safe for concurrent use and keeps
// connections alive between downloads, so make one and share it.
type Fetcher struct {
	client       *http.Client
	resolver     *net.Resolver
	maxBytes     int64
	timeout      time.Duration
	maxRedirects int
	// allow decides which addresses may be connected to. Tests replace it to
	// make one loopback port stand for the public internet.
	allow func(netip.AddrPort) bool
	// dial connects to a vetted IP address. Tests replace it to record
	// connection attempts and to stand loopback servers in for public ones.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// New returns a Fetcher configured by o.
func New(o Options) *Fetcher {
	f := &Fetcher{
		resolver:     o.Resolver,
		maxBytes:     positive(o.MaxBytes, DefaultMaxBytes),
		timeout:      positive(o.Timeout, DefaultTimeout),
		maxRedirects: positive(o.MaxRedirects, DefaultMaxRedirects),
		allow:        func(ap netip.AddrPort) bool { return isPublic(ap.Addr()) },
		dial:         (&net.Dialer{Timeout: dialTimeout}).DialContext,
	}
	if f.resolver == nil {
		f.resolver = net.DefaultResolver
	}
	if o.AllowPrivate {
		f.allow = func(netip.AddrPort) bool { return true }
	}
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // a proxy would connect for us, past the address check
			DialContext:            f.dialContext,
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    tlsTimeout,
			ResponseHeaderTimeout:  headerTimeout,
			MaxResponseHeaderBytes: maxHeaderSize,
			MaxIdleConns:           16,
			IdleConnTimeout:        30 * time.Second,
		},
		CheckRedirect: f.checkRedirect,
		// No Jar: cookies set by one document host are never sent anywhere.
	}
	return f
}

// positive returns v, or def when v is zero or negative (an unset option).
func positive[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Get downloads rawURL and returns its body. Every error wraps one of the
// package's Err values, or the error of ctx when ctx ended first.
func (f *Fetcher) Get(ctx context.Context, rawURL string) ([]byte, error) {
	d, err := f.Download(ctx, rawURL, nil)
	return d.Data, err
}

// A Download is a document downloaded, and the file name its server gave
// it (Content-Disposition), if any.
type Download struct {
	Name string
	Data []byte
}

// Download is Get with header added to the request (a client's
// credentials for its own server, its own User-Agent), keeping the file
// name the server gave.
func (f *Fetcher) Download(ctx context.Context, rawURL string, header http.Header) (Download, error) {
	u, err := parseURL(rawURL)
	if err != nil {
		return Download{}, err
	}
	dctx, cancel := context.WithTimeoutCause(ctx, f.timeout, ErrTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(dctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Download{}, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	req.Header.Set("User-Agent", userAgent) // unless the client names its own (Gotenberg's userAgent)
	for k, v := range header {
		req.Header[http.CanonicalHeaderKey(k)] = v
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return Download{}, f.explain(dctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Download{}, fmt.Errorf("%w: %s", ErrStatus, resp.Status)
	}
	if resp.ContentLength > f.maxBytes {
		return Download{}, f.tooLarge()
	}
	body, err := readAtMost(resp.Body, f.maxBytes)
	switch {
	case errors.Is(err, ErrTooLarge):
		return Download{}, f.tooLarge()
	case err != nil:
		return Download{}, f.explain(dctx, err)
	}
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
	return Download{Name: params["filename"], Data: body}, nil
}

// parseURL accepts only absolute http and https URLs with a host and
// without credentials. Parse errors are reported without the URL, which
// url.Parse would otherwise quote, credentials and all.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	if err := checkURL(u); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	return u, nil
}

// checkURL is the part of the URL rules that applies to redirect targets too.
func checkURL(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme %q is not http or https", u.Scheme)
	case u.User != nil:
		return errors.New("credentials in the URL are not accepted, as they would leak into logs")
	case u.Hostname() == "":
		return errors.New("the URL has no host")
	case u.Port() != "" && !validPort(u.Port()):
		return fmt.Errorf("port %q is out of range", u.Port())
	}
	return nil
}

// validPort reports whether p, digits as url.Parse guarantees, is 1..65535.
func validPort(p string) bool {
	n, err := strconv.ParseUint(p, 10, 16)
	return err == nil && n > 0
}

// checkRedirect bounds the redirect chain and applies the URL rules to each
// target; the dialer checks the target's addresses.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.maxRedirects {
		return fmt.Errorf("%w (more than %d)", ErrTooManyRedirects, f.maxRedirects)
	}
	if err := checkURL(req.URL); err != nil {
		return fmt.Errorf("%w: %v", ErrBadRedirect, err)
	}
	return nil
}

// explain turns an error of the HTTP client into one wrapping a package
// error, dropping the *url.Error around it whose text holds the URL.
func (f *Fetcher) explain(dctx context.Context, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	for _, known := range []error{ErrForbiddenAddress, ErrTooManyRedirects, ErrBadRedirect} {
		if errors.Is(err, known) {
			return err
		}
	}
	if cause := context.Cause(dctx); cause != nil {
		if errors.Is(cause, ErrTimeout) {
			return fmt.Errorf("%w (limit %s)", ErrTimeout, f.timeout)
		}
		return fmt.Errorf("fetch: %w", cause) // the caller's context ended
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
}

func (f *Fetcher) tooLarge() error {
	return fmt.Errorf("%w (limit %d bytes)", ErrTooLarge, f.maxBytes)
}

// readAtMost reads r to the end, or fails with ErrTooLarge as soon as it
// holds more than limit bytes; it never asks r for more than limit+1.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, ErrTooLarge
	}
	return b, nil
}

// Check says whether rawURL may be fetched now: a valid http(s) URL
// whose host resolves only to allowed addresses. The rules hold again at
// every connection (Post, Get): a name may resolve elsewhere later.
func (f *Fetcher) Check(ctx context.Context, rawURL string) error {
	u, err := parseURL(rawURL)
	if err != nil {
		return err
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	_, err = f.vetted(ctx, net.JoinHostPort(u.Hostname(), port))
	return err
}

// Send sends body to rawURL with method and header, within the fetcher's
// rules and timeout (redirects are not followed: a receiver answers where
// it was asked), and returns the status of the answer, whose body is
// discarded.
func (f *Fetcher) Send(ctx context.Context, method, rawURL string, header http.Header, body []byte) (int, error) {
	u, err := parseURL(rawURL)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	req.Header = header.Clone()
	req.Header.Set("User-Agent", userAgent)
	client := *f.client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		return 0, f.explain(ctx, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
