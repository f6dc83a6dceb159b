package client

import (
	"context"
	"fmt"
	"net/url"
)

// Register asks the service to e-mail a one-time code to email (GET
// /v1/auth/register). The service answers the same whether or not the
// address was seen before; a new registration replaces the previous code.
// Calls are rate-limited per address and per client address: over the
// limit the *Error has CodeRateLimit and RetryAfter.
func (c *Client) Register(ctx context.Context, email string) error {
	var message string // "Check your email for verification code."; nothing to act on
	return c.getJSON(ctx, request{method: "GET", path: "/v1/auth/register",
		query: url.Values{"email": {email}}}, &message)
}

// Verify exchanges the code e-mailed by Register for a new API key (GET
// /v1/auth/verify). The key is shown only this once and cannot be
// recovered: store it before doing anything else. A wrong or expired code
// gives an *Error with CodeValidation.
func (c *Client) Verify(ctx context.Context, email, code string) (apiKey string, err error) {
	r := request{method: "GET", path: "/v1/auth/verify", query: url.Values{"email": {email}, "code": {code}}}
	if err := c.getJSON(ctx, r, &apiKey); err != nil {
		return "", err
	}
	if apiKey == "" {
		return "", fmt.Errorf("quire client: %s: the answer holds no API key", r.op())
	}
	return apiKey, nil
}
