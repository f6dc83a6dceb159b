package pdfsign

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
)

// ErrTSAUnavailable: no time-stamp authority answered. Signing waits for
// one rather than making a signature of a lower level than configured.
var ErrTSAUnavailable = errors.New("pdfsign: no time-stamp authority answered")

// TSAList asks several time-stamp authorities in order, each within its
// own timeout, and keeps the state of each for health reports. The first
// valid token wins; an authority that refuses, times out or answers
// something that is not a token for this request is skipped.
type TSAList struct {
	clients []*TSAClient
	timeout time.Duration
	now     func() time.Time

	mu     sync.Mutex
	states []TSAState
}

// TSAState is what the last request to one authority found.
type TSAState struct {
	URL         string     `json:"url"`   // scheme://host only: the URL may carry credentials
	State       string     `json:"state"` // "unknown" (not asked yet), "ok" or "failing"
	LastSuccess *time.Time `json:"lastSuccess,omitempty"`
	LastFailure *time.Time `json:"lastFailure,omitempty"`
	LastError   string     `json:"lastError,omitempty"`
}

// SplitTSAURLs splits a list of URLs separated by commas or white space
// (QUIRE_TSA_URL); neither occurs unescaped in a URL.
func SplitTSAURLs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// NewTSAList returns the client of the authorities at urls, in order,
// each given at most timeout per request.
func NewTSAList(urls []string, timeout time.Duration) *TSAList {
	l := &TSAList{timeout: timeout, now: time.Now}
	for _, u := range urls {
		l.clients = append(l.clients, &TSAClient{URL: u})
		l.states = append(l.states, TSAState{URL: safeURL(u), State: "unknown"})
	}
	return l
}

// Timestamp implements Timestamper. When every authority fails, the error
// wraps ErrTSAUnavailable and names each failure.
func (l *TSAList) Timestamp(ctx context.Context, digest []byte) ([]byte, error) {
	var errs []error
	for i, c := range l.clients {
		token, err := l.ask(ctx, c, digest)
		if ctx.Err() != nil {
			return nil, ctx.Err() // the caller gave up: no authority is to blame
		}
		l.record(i, err)
		if err == nil {
			return token, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("%w: %w", ErrTSAUnavailable, errors.Join(errs...))
}

func (l *TSAList) ask(ctx context.Context, c *TSAClient, digest []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	return c.Timestamp(ctx, digest)
}

func (l *TSAList) record(i int, err error) {
	now := l.now().UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &l.states[i]
	if err == nil {
		s.State, s.LastSuccess = "ok", &now
		return
	}
	s.State, s.LastFailure, s.LastError = "failing", &now, err.Error()
}

// States returns the state of each authority, in the order they are asked.
func (l *TSAList) States() []TSAState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]TSAState(nil), l.states...)
}
