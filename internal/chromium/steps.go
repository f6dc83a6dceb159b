package chromium

import (
	"log/slog"
	"time"
)

// steps times the steps of making a tab or printing a page, for a debug
// log line: which step takes the time is what tuning the engine needs.
type steps struct {
	last  time.Time
	attrs []any
}

func newSteps() *steps { return &steps{last: time.Now()} }

// done records the time since the previous step under name.
func (s *steps) done(name string) {
	now := time.Now()
	s.attrs = append(s.attrs, slog.Float64(name+"_ms", float64(now.Sub(s.last).Microseconds())/1000))
	s.last = now
}

func (s *steps) log(l *slog.Logger, msg string) { l.Debug(msg, s.attrs...) }
