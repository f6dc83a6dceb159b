package engine

import (
	"errors"
	"time"

	"github.com/quire-dev/quire"
)

// ToAPIError translates the errors of Convert into the error codes of the
// HTTP contract (see the comments of the sentinel errors); retryAfter is
// the wait suggested when the engine is busy (Pool.RetryAfter).
func ToAPIError(err error, retryAfter time.Duration) error {
	var failed *PageFailure
	switch {
	case errors.As(err, &failed): // its field names the check, for Gotenberg's 409
		return &quire.Error{Code: quire.CodeUnprocessable, Message: err.Error(), Details: []quire.Detail{{Field: failed.Field, Issue: failed.Issue}}}
	case errors.Is(err, ErrUnsupportedFormat):
		return quire.Invalid("The source format is not supported.", quire.Detail{Field: "from", Issue: err.Error()})
	case errors.Is(err, ErrInvalidFormat):
		return quire.Errorf(quire.CodeInvalidFormat, "%v", err)
	case errors.Is(err, ErrTooLarge):
		return quire.Errorf(quire.CodePayloadTooLarge, "%v", err)
	case errors.Is(err, ErrUnprocessable):
		return quire.Errorf(quire.CodeUnprocessable, "%v", err)
	case errors.Is(err, ErrBusy), errors.Is(err, ErrUnavailable):
		return &quire.Error{Code: quire.CodeEngineBusy, Message: "The conversion engine is busy or unavailable; retry later.", RetryAfter: retryAfter}
	}
	return err
}
