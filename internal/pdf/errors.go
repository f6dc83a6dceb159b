package pdf

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// Sentinel errors that callers map to responses. All errors returned by
// this package that are caused by the input document wrap one of them, so
// a caller can tell "this document cannot be signed" from a server fault.
var (
	// ErrEncrypted: the document is encrypted; signing it would need its
	// password and would have to keep its encryption.
	ErrEncrypted = errors.New("pdf: document is encrypted")

	// ErrTooLarge: the document exceeds Limits.MaxInputSize.
	ErrTooLarge = errors.New("pdf: document too large")

	// ErrUnreadable: the document is not a PDF, or is damaged beyond repair.
	ErrUnreadable = errors.New("pdf: document is not a readable PDF")

	// ErrDamagedSigned: the document's structure is damaged and it already
	// carries a signature. Repairing it means rewriting it, which would
	// break that signature, so it is refused instead.
	ErrDamagedSigned = errors.New("pdf: damaged document already carries a signature")
)

// inputError makes an error caused by the input document match one of the
// sentinel errors: one that already does is kept, and so is the error of
// a context that ended the work; any other (a damaged structure, an object
// that cannot be read) becomes ErrUnreadable.
func inputError(err error) error {
	for _, s := range []error{ErrEncrypted, ErrTooLarge, ErrUnreadable, ErrDamagedSigned, context.Canceled, context.DeadlineExceeded} {
		if err == nil || errors.Is(err, s) {
			return err
		}
	}
	return fmt.Errorf("%w: %v", ErrUnreadable, err)
}

// Recover, deferred, turns a panic while handling a document into
// ErrUnreadable in *err:
// hostile input must never take the server down. The error names the
// frames that led to the panic, so that the log shows where it happened.
func Recover(err *error) {
	if r := recover(); r != nil {
		*err = errors.Join(ErrUnreadable, fmt.Errorf("pdf: internal error: %v [at %s]", r, panicFrames(debug.Stack())))
	}
}

// maxPanicFrames bounds the frames that Recover reports.
const maxPanicFrames = 8

// panicFrames condenses a stack trace taken while recovering from a panic
// (the text of runtime/debug.Stack) to one line: "function (file:line)"
// for the innermost frames, joined by " < ", without the frames of the
// runtime and of the recovery itself, without arguments and directories.
func panicFrames(stack []byte) string {
	lines := strings.Split(strings.TrimSpace(string(stack)), "\n")
	var frames []string
	// After the "goroutine N [running]:" line, each frame is a function
	// line followed by an indented "file:line +0xNN" line.
	for i := 1; i+1 < len(lines) && len(frames) < maxPanicFrames; i += 2 {
		fn, loc := strings.TrimSpace(lines[i]), strings.TrimSpace(lines[i+1])
		if strings.HasPrefix(fn, "created by ") {
			break
		}
		if j := strings.LastIndexByte(fn, '('); j > 0 {
			fn = fn[:j]
		}
		fn = fn[strings.LastIndexByte(fn, '/')+1:]
		if fn == "panic" || strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "debug.") ||
			strings.HasSuffix(fn, "pdf.Recover") {
			continue
		}
		if j := strings.LastIndex(loc, " +0x"); j > 0 {
			loc = loc[:j]
		}
		loc = loc[strings.LastIndexByte(loc, '/')+1:]
		frames = append(frames, fn+" ("+loc+")")
	}
	if len(frames) == 0 {
		return "unknown location"
	}
	return strings.Join(frames, " < ")
}
