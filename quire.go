// Package quire holds the domain types that every part of the service shares:
// the error model of the HTTP contract and the records kept in storage.
// Storage, mail and HTTP are adapters around these types; this package
// imports none of them.
package quire

import (
	"errors"
	"fmt"
	"time"
)

// Error codes of the error body (DESIGN.md). Each maps to one HTTP status in
// internal/httpapi; domain code picks the code, never the status.
const (
	CodeValidation       = "VALIDATION_ERROR"       // 400
	CodeInvalidFormat    = "INVALID_FILE_FORMAT"    // 400
	CodeAuthentication   = "AUTHENTICATION_ERROR"   // 401
	CodeForbidden        = "FORBIDDEN"              // 403
	CodeNotFound         = "NOT_FOUND"              // 404
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"     // 405
	CodePayloadTooLarge  = "PAYLOAD_TOO_LARGE"      // 413
	CodeUnsupportedMedia = "UNSUPPORTED_MEDIA_TYPE" // 415
	CodeUnprocessable    = "UNPROCESSABLE_DOCUMENT" // 422
	CodeRateLimit        = "RATE_LIMIT_ERROR"       // 429
	CodeInternal         = "INTERNAL_ERROR"         // 500
	CodeUnavailable      = "SERVICE_UNAVAILABLE"    // 503: database or mail relay down
	CodeEngineBusy       = "ENGINE_UNAVAILABLE"     // 503: conversion engine saturated
)

// Detail names one bad field of a request and what is wrong with it.
type Detail struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// Error is a failure that the caller of the API can act on. Any other error
// reaching the HTTP layer is reported as INTERNAL_ERROR without its text.
type Error struct {
	Code       string
	Message    string
	Details    []Detail
	RetryAfter time.Duration // sent as Retry-After for 429 and 503
}

func (e *Error) Error() string {
	if len(e.Details) == 0 {
		return e.Code + ": " + e.Message
	}
	return fmt.Sprintf("%s: %s (%s %s)", e.Code, e.Message, e.Details[0].Field, e.Details[0].Issue)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a VALIDATION_ERROR for the given details.
func Invalid(message string, details ...Detail) *Error {
	return &Error{Code: CodeValidation, Message: message, Details: details}
}

// ErrorCode returns the code of err when it is (or wraps) an *Error, and
// INTERNAL_ERROR otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrNotFound is returned by stores when a record does not exist.
var ErrNotFound = errors.New("not found")

// APIKey is the stored record of an issued API key. The key itself is never
// stored: only its SHA-256 (Hash) and its first characters (Prefix), so
// that operators can recognise a key without being able to use it.
type APIKey struct {
	ID         string
	Email      string
	Prefix     string
	Hash       string
	CreatedAt  time.Time
	LastUsedAt time.Time // zero when never used
	RevokedAt  time.Time // zero while active
}

// Active reports whether the key may authenticate requests.
func (k APIKey) Active() bool { return k.RevokedAt.IsZero() }

// LoginCode is a one-time code waiting to be verified. Hash is a keyed hash
// of the code (HMAC with the server secret); the code itself is never stored.
type LoginCode struct {
	Email     string
	Hash      string
	ExpiresAt time.Time
	CreatedAt time.Time
}
