package pdfsign

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors that callers map to responses. All errors returned by
// this package that are caused by the input document wrap one of them, so
// a caller can tell "this document cannot be signed" from a server fault.
var (
	// ErrEncrypted: the document is encrypted; signing it would need its
	// password and would have to keep its encryption.
	ErrEncrypted = errors.New("pdfsign: document is encrypted")

	// ErrTooLarge: the document exceeds Limits.MaxInputSize.
	ErrTooLarge = errors.New("pdfsign: document too large")

	// ErrUnreadable: the document is not a PDF, or is damaged beyond repair.
	ErrUnreadable = errors.New("pdfsign: document is not a readable PDF")

	// ErrDamagedSigned: the document's structure is damaged and it already
	// carries a signature. Repairing it means rewriting it, which would
	// break that signature, so it is refused instead.
	ErrDamagedSigned = errors.New("pdfsign: damaged document already carries a signature")

	// ErrSignatureTooLarge: the CMS signature does not fit the space
	// reserved for it (Options.ContentsSize).
	ErrSignatureTooLarge = errors.New("pdfsign: signature does not fit the reserved space")
)

// inputError makes an error caused by the input document match one of the
// sentinel errors: one that already does is kept, and so is the error of
// a context that ended the work; any other (a damaged structure, an object
// that cannot be read) becomes ErrUnreadable.
func inputError(err error) error {
	for _, s := range []error{ErrEncrypted, ErrTooLarge, ErrUnreadable, ErrDamagedSigned, ErrSignatureTooLarge, ErrCertified, context.Canceled, context.DeadlineExceeded} {
		if err == nil || errors.Is(err, s) {
			return err
		}
	}
	return fmt.Errorf("%w: %v", ErrUnreadable, err)
}
