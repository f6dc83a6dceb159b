package httpapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/metering"
)

// keyed runs a metered route's handler for an API key: within the key's
// limits (429 beyond them, the RateLimit headers on every answer), and
// counting what the answer did before it is sent.
func (s *Server) keyed(op string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, ok := APIKey(r.Context())
		if !ok {
			h(w, r)
			return
		}
		start := time.Now()
		var adm *keylimit.Admission
		if s.deps.Limits != nil {
			a, err := s.deps.Limits.Admit(r.Context(), key.ID)
			if a != nil {
				rateLimitHeaders(w.Header(), a)
			}
			if err != nil {
				s.fail(w, r, err)
				return
			}
			defer a.Done()
			adm = a
		}
		if s.deps.Meter == nil {
			h(w, r)
			return
		}
		tally := &metering.Tally{Key: key.ID, Operation: op, OperationUsage: quire.OperationUsage{Requests: 1, Documents: 1}, Start: start,
			Settle: func(c quire.Charge, res quire.ChargeResult) error {
				s.deps.Meter.Counted(c, res)
				if adm == nil {
					return nil
				}
				err := adm.Settle(res, c.Documents())
				rateLimitHeaders(w.Header(), adm)
				return err
			}}
		if adm != nil {
			tally.Quota, tally.Hold = adm.Limits.Quota, adm.Hold()
		}
		if b, ok := r.Body.(*body); ok {
			tally.Read = func() int64 { return b.read }
		}
		m := &meteredWriter{ResponseWriter: w, srv: s, r: r, tally: tally, before: slices.Collect(maps.Keys(w.Header()))}
		h(m, r.WithContext(metering.WithTally(r.Context(), tally)))
	}
}

// rateLimitHeaders sets the IETF RateLimit-Policy and RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers-11): one policy per limit the key
// has, "rate" (q per w seconds, shared by the instances), "quota"
// (documents per month; w is the month's length) and "concurrency"
// (requests in progress; on PostgreSQL, on every instance).
func rateLimitHeaders(h http.Header, a *keylimit.Admission) {
	var policy, state []string
	if r := a.Limits.Rate; r.N > 0 {
		policy = append(policy, fmt.Sprintf(`"rate";q=%d;w=%d`, r.N, int(r.Per.Seconds())))
		state = append(state, fmt.Sprintf(`"rate";r=%d;t=%d`, a.Rate.Remaining, seconds(a.Rate.Reset)))
	}
	if q := a.Limits.Quota; q > 0 {
		policy = append(policy, fmt.Sprintf(`"quota";q=%d;w=%d`, q, int(a.Month.Seconds())))
		state = append(state, fmt.Sprintf(`"quota";r=%d;t=%d`, max(0, q-a.QuotaUsed), seconds(a.MonthEnd)))
	}
	if c := a.Limits.Concurrent; c > 0 {
		policy = append(policy, fmt.Sprintf(`"concurrency";q=%d;qu="concurrent-requests"`, c))
		state = append(state, fmt.Sprintf(`"concurrency";r=%d`, max(0, c-a.Running)))
	}
	if len(policy) > 0 {
		h.Set("RateLimit-Policy", strings.Join(policy, ", "))
		h.Set("RateLimit", strings.Join(state, ", "))
	}
}

// seconds rounds d up to whole seconds.
func seconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

// meter returns the count of the metered request of ctx, which its
// handler fills in (documents, pages, engine time, a conversion); a
// throwaway one outside of any (the request has no key).
func meter(ctx context.Context) *metering.Tally {
	if a := metering.TallyOf(ctx); a != nil {
		return a
	}
	return &metering.Tally{}
}

// meteredWriter records the count of a successful answer (200 or 202)
// before its status line is sent, unless the work committed it already:
// an answer the client received is always counted. When the count cannot
// be recorded, the client gets 503 instead of the answer (429 when the
// quota refuses it), without the headers the handler set for it, and the
// handler's writes go nowhere.
type meteredWriter struct {
	http.ResponseWriter
	srv     *Server
	r       *http.Request
	tally   *metering.Tally
	before  []string // the headers set before the handler ran
	decided bool
	failed  bool
}

var errNotCounted = errors.New("the answer could not be counted")

func (m *meteredWriter) WriteHeader(status int) {
	if !m.decided {
		m.decided = true
		if status == http.StatusOK || status == http.StatusAccepted {
			if err := m.record(); err != nil {
				m.failed = true
				maps.DeleteFunc(m.ResponseWriter.Header(), func(k string, _ []string) bool { return !slices.Contains(m.before, k) })
				m.srv.fail(m.ResponseWriter, m.r, err)
				return
			}
		}
	}
	if !m.failed {
		m.ResponseWriter.WriteHeader(status)
	}
}

func (m *meteredWriter) Write(b []byte) (int, error) {
	if !m.decided {
		m.WriteHeader(http.StatusOK)
	}
	if m.failed {
		return 0, errNotCounted
	}
	return m.ResponseWriter.Write(b)
}

func (m *meteredWriter) Unwrap() http.ResponseWriter { return m.ResponseWriter }

func (m *meteredWriter) record() error {
	if m.tally.Committed() {
		return nil
	}
	c := m.tally.Charge(m.srv.deps.Meter.Now())
	// The answer is ready: a client that went away meanwhile still had
	// the work done, and is counted.
	res, err := m.srv.deps.Meter.Record(context.WithoutCancel(m.r.Context()), c)
	if err != nil {
		m.srv.logger(m.r.Context()).Error("usage not recorded; answering 503", "key_id", m.tally.Key, "operation", m.tally.Operation, "err", err)
		return &quire.Error{Code: quire.CodeUnavailable, RetryAfter: 5 * time.Second,
			Message: "The request could not be counted, so its answer is withheld; try again shortly."}
	}
	return m.tally.Settled(c, res)
}
