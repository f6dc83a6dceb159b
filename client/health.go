package client

import (
	"context"
	"errors"
	"time"
)

// Health is the answer of GET /v1/health.
type Health struct {
	Status    string            `json:"status"` // "healthy" or "unavailable"
	Timestamp time.Time         `json:"timestamp"`
	Version   string            `json:"version"`
	Instance  Instance          `json:"instance"`
	Checks    map[string]string `json:"checks"` // per dependency, e.g. "database": "ok"
}

// Instance describes the server process that answered.
type Instance struct {
	StartTime time.Time `json:"startTime"`
	Uptime    float64   `json:"uptime"` // seconds
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
