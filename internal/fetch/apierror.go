package fetch

import (
	"context"
	"errors"
	"strings"

	"github.com/quire-dev/quire"
)

// ToAPIError translates an error of Get for the URL in the request field
// named field into the answer of the HTTP contract: 400 for a URL that is
// not acceptable, 422 for a download that failed, with one message for
// refused addresses and unknown hosts, so that callers cannot map the
// internal network (log err for the cause). A cancelled context stays as it is.
func ToAPIError(err error, field string) error {
	switch {
	case errors.Is(err, ErrInvalidURL):
		return quire.Invalid("The URL in "+field+" is not valid.", quire.Detail{Field: field, Issue: err.Error()})
	case errors.Is(err, context.Canceled):
		return err
	}
	msg := "The document could not be downloaded from a public address."
	for _, e := range []error{ErrTooLarge, ErrTimeout, ErrStatus, ErrTooManyRedirects} {
		if errors.Is(err, e) {
			msg = "The document could not be downloaded: " + strings.TrimPrefix(e.Error(), "fetch: ") + "."
		}
	}
	return &quire.Error{Code: quire.CodeUnprocessable, Message: msg,
		Details: []quire.Detail{{Field: field, Issue: "could not be downloaded"}}}
}
