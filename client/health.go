package client

import (
	"context"
	"errors"
	"time"
)

// Health is the answer of GET /v1/health.
type Health struct {
	Status    string            `json:"status"` // "ok" or "unavailable"
	Timestamp time.Time         `json:"timestamp"`
	Version   string            `json:"version"`
	Checks    map[string]string `json:"checks"` // per dependency, e.g. "database": "ok"
}

// Health reports whether the service and its dependencies answer (GET
// /v1/health). When a dependency is down the service answers 503: Health
// then returns the *Error (CodeUnavailable, with RetryAfter) together with
// the Health that the answer carries, so callers can see which check
// failed; the Health is nil if the answer did not carry one.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var h Health
	err := c.getJSON(ctx, request{method: "GET", path: "/v1/health"}, &h)
	if err == nil {
		return &h, nil
	}
	var e *Error
	if errors.As(err, &e) && e.decodeBody(&h) && h.Status != "" {
		return &h, err
	}
	return nil, err
}
