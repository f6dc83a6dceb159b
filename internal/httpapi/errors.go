package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/quire-dev/quire"
)

// statusOf maps the error codes of the contract to HTTP statuses.
var statusOf = map[string]int{
	quire.CodeValidation:       http.StatusBadRequest,
	quire.CodeInvalidFormat:    http.StatusBadRequest,
	quire.CodeAuthentication:   http.StatusUnauthorized,
	quire.CodeForbidden:        http.StatusForbidden,
	quire.CodeNotFound:         http.StatusNotFound,
	quire.CodeMethodNotAllowed: http.StatusMethodNotAllowed,
	quire.CodePayloadTooLarge:  http.StatusRequestEntityTooLarge,
	quire.CodeUnsupportedMedia: http.StatusUnsupportedMediaType,
	quire.CodeUnprocessable:    http.StatusUnprocessableEntity,
	quire.CodeRateLimit:        http.StatusTooManyRequests,
	quire.CodeInternal:         http.StatusInternalServerError,
	quire.CodeUnavailable:      http.StatusServiceUnavailable,
	quire.CodeEngineBusy:       http.StatusServiceUnavailable,
}

// Status is the HTTP status of an error code of the contract.
func Status(code string) int {
	if st := statusOf[code]; st != 0 {
		return st
	}
	return http.StatusInternalServerError
}

// ErrorBody is the body of every non-2xx answer.
type ErrorBody struct {
	Code      string         `json:"code"`
	Error     string         `json:"error"`
	Message   string         `json:"message"`
	RequestID string         `json:"requestId"`
	Details   []quire.Detail `json:"details,omitempty"`
}

// fail answers err in the error body. Errors that are not *quire.Error are
// logged with the request id and answered as INTERNAL_ERROR without their
// text, which may hold details of the machine.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var qe *quire.Error
	if errors.Is(err, context.Canceled) { // the client went away; nobody reads this answer
		qe = quire.Errorf(quire.CodeUnavailable, "The request was cancelled.")
	} else if !errors.As(err, &qe) {
		s.logger(r.Context()).Error("request failed", "err", err)
		qe = s.unexpected(r.Context())
	}
	if qe.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((qe.RetryAfter+999_999_999)/1e9)))
	}
	status := Status(qe.Code)
	if d := infoOf(r.Context()).dialect; d != nil {
		d.Fail(w, r, status, qe)
		return
	}
	writeJSON(w, status, s.errorBody(r, status, qe))
}

// errDatabaseDown answers requests, health checks included, while the
// database does not answer.
var errDatabaseDown = &quire.Error{Code: quire.CodeUnavailable, Message: "The database is unreachable.", RetryAfter: 5 * time.Second}

// unexpected is the answer to an error that no code of the contract
// describes. When the database does not answer, it is the likely cause,
// and a dependency that is down is a 503 to retry, not a bug of quire's.
func (s *Server) unexpected(ctx context.Context) *quire.Error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := s.deps.DB.Ping(ctx); err != nil {
		return errDatabaseDown
	}
	return quire.Errorf(quire.CodeInternal, "Something went wrong on our side; quote the request id when reporting it.")
}

func (s *Server) errorBody(r *http.Request, status int, qe *quire.Error) ErrorBody {
	return ErrorBody{Code: qe.Code, Error: http.StatusText(status), Message: qe.Message,
		RequestID: infoOf(r.Context()).id, Details: qe.Details}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // JSON for programs, not for embedding in HTML
	enc.Encode(v)
}
