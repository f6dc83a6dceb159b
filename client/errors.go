package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error codes of the service's error body. Error.Code holds one of them
// (or a code added to the service later), or "" when the answer did not
// carry the error body, such as a proxy's own error page.
const (
	CodeValidation       = "VALIDATION_ERROR"       // 400: a query or body field is invalid; Details names each
	CodeInvalidFormat    = "INVALID_FILE_FORMAT"    // 400: the file is not of the type announced
	CodeAuthentication   = "AUTHENTICATION_ERROR"   // 401: missing, malformed, unknown or revoked API key
	CodeForbidden        = "FORBIDDEN"              // 403: the credential may not read this
	CodeNotFound         = "NOT_FOUND"              // 404: no such path
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"     // 405
	CodePayloadTooLarge  = "PAYLOAD_TOO_LARGE"      // 413: the body is over the route's limit
	CodeUnsupportedMedia = "UNSUPPORTED_MEDIA_TYPE" // 415
	CodeUnprocessable    = "UNPROCESSABLE_DOCUMENT" // 422: the document is encrypted or corrupt
	CodeRateLimit        = "RATE_LIMIT_ERROR"       // 429: wait RetryAfter
	CodeInternal         = "INTERNAL_ERROR"         // 500: quote RequestID when reporting it
	CodeUnavailable      = "SERVICE_UNAVAILABLE"    // 503: a dependency is down; wait RetryAfter
	CodeEngineBusy       = "ENGINE_UNAVAILABLE"     // 503: the conversion engine is saturated; wait RetryAfter
)

// Detail names one field of a request and what is wrong with it, such as
// {Field: "signer.email", Issue: "is required"}.
type Detail struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// Error is an answer of the service outside 2xx. Use errors.As to reach it.
type Error struct {
	Status     int           // HTTP status of the answer
	Code       string        // error code of the contract, e.g. CodeValidation; "" when the body was not the error body
	Message    string        // a sentence for people; the status text when the body was not the error body
	RequestID  string        // quote it when reporting a problem; it names the service's log lines
	Details    []Detail      // the fields at fault, for validation errors
	RetryAfter time.Duration // from the Retry-After header; zero when absent
	Method     string        // the request that failed, e.g. POST
	Path       string        // e.g. /v1/sign; never the query, which may hold codes

	body []byte // the raw answer, for operations whose error answers carry more fields
}

// Error reads like "quire: POST /v1/sign: 400 VALIDATION_ERROR: The
// request is not valid. (signer.email is required) [request id 5d1c]".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "quire: %s %s: %d", e.Method, e.Path, e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	b.WriteString(": " + e.Message)
	if len(e.Details) > 0 {
		parts := make([]string, len(e.Details))
		for i, d := range e.Details {
			parts[i] = d.Field + " " + d.Issue
		}
		b.WriteString(" (" + strings.Join(parts, "; ") + ")")
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " [retry after %s]", e.RetryAfter)
	}
	if e.RequestID != "" {
		b.WriteString(" [request id " + e.RequestID + "]")
	}
	return b.String()
}

// ErrorCode returns the Code of err when it is or wraps an *Error, and ""
// otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// decodeBody decodes the raw answer into v, for operations whose error
// answers carry fields beyond the error body; it reports success.
func (e *Error) decodeBody(v any) bool { return json.Unmarshal(e.body, v) == nil }

// errorBody is the JSON body of every error answer of the service.
type errorBody struct {
	Code      string   `json:"code"`
	Message   string   `json:"message"`
	RequestID string   `json:"requestId"`
	Details   []Detail `json:"details"`
}

// responseError turns a non-2xx answer into an *Error. An answer whose
// body is not the error body (a proxy's HTML page, an empty body) still
// gives an *Error, with the status text as its message.
func responseError(r request, res *http.Response) *Error {
	e := &Error{Status: res.StatusCode, Method: r.method, Path: r.path,
		RequestID:  res.Header.Get("X-Request-Id"),
		RetryAfter: parseRetryAfter(res.Header.Get("Retry-After"), time.Now())}
	e.body, _ = io.ReadAll(io.LimitReader(res.Body, maxErrorBodyBytes))
	var b errorBody
	if json.Unmarshal(e.body, &b) == nil && b.Code != "" {
		e.Code, e.Message, e.Details = b.Code, b.Message, b.Details
		if b.RequestID != "" {
			e.RequestID = b.RequestID
		}
	}
	if e.Message == "" {
		e.Message = statusText(res.StatusCode)
	}
	return e
}

func statusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "HTTP status " + strconv.Itoa(status)
}

// parseRetryAfter reads Retry-After in either of its forms, seconds or an
// HTTP date; zero when it is absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 || s > int64(math.MaxInt64/time.Second) { // would not fit a Duration
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
