package engine

import (
	"errors"
	"fmt"
)

// Errors of the engines and of the checks before them (package safeinput).
// Each names the HTTP answer it stands for (ToAPIError); wrapped errors
// carry the details (match them with errors.Is).
var (
	// ErrUnsupportedFormat: the requested source format is not one the
	// engine converts (400 VALIDATION_ERROR).
	ErrUnsupportedFormat = errors.New("unsupported source format")
	// ErrInvalidFormat: the input is not a document of the declared format
	// (400 INVALID_FILE_FORMAT).
	ErrInvalidFormat = errors.New("input is not a document of the declared format")
	// ErrTooLarge: the input exceeds the engine's input limit (MaxInputBytes) (413 PAYLOAD_TOO_LARGE).
	ErrTooLarge = errors.New("input is larger than the conversion limit")
	// ErrUnprocessable: the document is of the right type but cannot be
	// converted: damaged, password protected, rejected by LibreOffice, or
	// too slow (422 UNPROCESSABLE_DOCUMENT). ErrEncrypted, ErrTimeout and
	// ErrCrashed also match it.
	ErrUnprocessable = errors.New("document cannot be converted")
	// ErrEncrypted: the document is password protected.
	ErrEncrypted = fmt.Errorf("%w: it is password protected", ErrUnprocessable)
	// ErrTimeout: the conversion exceeded PoolOptions.JobTimeout; its worker was killed.
	ErrTimeout = fmt.Errorf("%w: the conversion exceeded its time limit", ErrUnprocessable)
	// ErrMemoryLimit: the conversion needed more memory than
	// PoolOptions.MaxWorkerMemory, or the document expands to more than
	// the limit of what it may inflate to (MaxExpandedBytes); a worker past the limit was killed.
	ErrMemoryLimit = fmt.Errorf("%w: it needs more memory than the limit", ErrUnprocessable)
	// ErrCrashed: the engine died on the document twice, on two workers.
	ErrCrashed = fmt.Errorf("%w: the conversion engine crashed on it twice", ErrUnprocessable)
	// ErrBusy: the queue is full (503 ENGINE_UNAVAILABLE with Retry-After,
	// see the pools' RetryAfter).
	ErrBusy = errors.New("conversion queue is full")
	// ErrUnavailable: no engine can take the job: the pool is closed, or its
	// workers cannot start (503 ENGINE_UNAVAILABLE).
	ErrUnavailable = errors.New("conversion engine unavailable")
)
