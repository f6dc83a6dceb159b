package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

const (
	// DefaultUserAgent identifies this SDK in the service's logs unless
	// WithUserAgent says otherwise.
	DefaultUserAgent = "quire-go-client/1"
	// DefaultMaxResponseBytes bounds how much of one answer is read: room
	// for a large signed PDF, base64-encoded in its JSON envelope.
	DefaultMaxResponseBytes = 64 << 20
	// maxErrorBodyBytes bounds the reading of an error answer, which is a
	// small JSON object; anything larger is not the error body.
	maxErrorBodyBytes = 1 << 20
)

// ErrResponseTooLarge is returned (wrapped) when an answer is longer than
// the limit set with WithMaxResponseBytes.
var ErrResponseTooLarge = errors.New("response body exceeds the client's limit")

// Client calls one quire service. Its methods are safe for concurrent use.
type Client struct {
	base      *url.URL
	baseErr   error // why the base URL is unusable; returned by every call
	apiKey    string
	http      *http.Client
	userAgent string
	maxBytes  int64
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sets the bearer credential sent to the operations that need
// one (sign, convert, verify, usage). An operator may pass the service's
// admin token instead, to read every license's usage.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient sets the HTTP client that sends the requests, for proxies,
// TLS settings or an overall timeout; http.DefaultClient when not set.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.http = hc
		}
	}
}

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithMaxResponseBytes bounds how many bytes of one answer are read, so
// that a misbehaving server or proxy cannot exhaust memory. Zero or less
// keeps DefaultMaxResponseBytes.
func WithMaxResponseBytes(n int64) Option {
	return func(c *Client) {
		if n > 0 {
			c.maxBytes = n
		}
	}
}

// New returns a client of the service at baseURL, such as
// "https://quire.example.com" or "https://example.com/quire" (paths such as
// /v1/sign are appended to it). An unusable baseURL is reported by the
// first call, so that New can be used in declarations.
func New(baseURL string, opts ...Option) *Client {
	c := &Client{http: http.DefaultClient, userAgent: DefaultUserAgent, maxBytes: DefaultMaxResponseBytes}
	c.base, c.baseErr = parseBase(baseURL)
	for _, o := range opts {
		o(c)
	}
	return c
}

func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// Only the cause: url.Parse's own error repeats the text, which may
		// hold a password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("quire client: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("quire client: base URL %q: want http:// or https:// and a host", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("quire client: base URL %q: must not have a query or fragment", u.Redacted())
	}
	return u, nil
}

// String describes the client without its credential, so that logging a
// Client never leaks the API key.
func (c *Client) String() string {
	if c.base == nil {
		return "quire client (unusable base URL)"
	}
	return "quire client for " + c.base.Redacted()
}

// GoString is String, for %#v.
func (c *Client) GoString() string { return c.String() }

// request is one call to the service.
type request struct {
	method, path string
	query        url.Values
	body         io.Reader // nil: no body
	contentType  string
	accept       string
	auth         bool // send the credential
}

// op names the call in errors: method and path, never the query, which
// may hold an e-mail address and a one-time code.
func (r request) op() string { return r.method + " " + r.path }

// do sends r and returns the response of a 2xx answer, whose body the
// caller must close. Any other answer is read, closed and returned as an
// *Error.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	if c.baseErr != nil {
		return nil, c.baseErr
	}
	req, err := c.newHTTPRequest(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("quire client: %s: %w", r.op(), err)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("quire client: %s: %w", r.op(), redactURLError(err))
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		defer res.Body.Close()
		return nil, responseError(r, res)
	}
	return res, nil
}

func (c *Client) newHTTPRequest(ctx context.Context, r request) (*http.Request, error) {
	u := c.base.JoinPath(r.path)
	u.RawQuery = r.query.Encode()
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), r.body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.userAgent)
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if r.auth && c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	return req, nil
}

// redactURLError removes the query and any user information from the
// address that net/http puts into its errors, keeping the error's type
// and what it wraps (timeouts, context errors).
func redactURLError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	clean := ue.URL
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.User, u.RawQuery, u.ForceQuery = nil, "", false
		clean = u.String()
	} else if i := strings.IndexByte(clean, '?'); i >= 0 {
		clean = clean[:i]
	}
	return &url.Error{Op: ue.Op, URL: clean, Err: ue.Err}
}

// getJSON sends r and decodes the JSON answer into v.
func (c *Client) getJSON(ctx context.Context, r request, v any) error {
	if r.accept == "" {
		r.accept = "application/json"
	}
	res, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	return c.decodeJSON(r, res, v)
}

// decodeJSON decodes the body of res into v, within the size limit. The
// body is read to its end, which lets the connection be reused and
// refuses trailing bytes after the JSON value.
func (c *Client) decodeJSON(r request, res *http.Response, v any) error {
	b, err := c.readAll(r, res)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("quire client: %s: decoding the %d answer: %w", r.op(), res.StatusCode, err)
	}
	return nil
}

// readAll reads the body of res within the size limit.
func (c *Client) readAll(r request, res *http.Response) ([]byte, error) {
	b, err := io.ReadAll(c.limit(res.Body))
	if err != nil {
		return nil, fmt.Errorf("quire client: %s: reading the answer: %w", r.op(), err)
	}
	return b, nil
}

func (c *Client) limit(r io.Reader) io.Reader {
	return &limitedReader{r: r, n: c.maxBytes, max: c.maxBytes}
}

// limitedReader is io.LimitReader that fails, rather than ending quietly,
// when the stream is longer than the limit: a truncated PDF or JSON
// document must never pass for a whole one.
type limitedReader struct {
	r   io.Reader
	n   int64 // bytes still allowed
	max int64 // the limit, for the error
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// One more byte tells a stream of exactly the limit from a longer one.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("%w of %d bytes", ErrResponseTooLarge, l.max)
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
