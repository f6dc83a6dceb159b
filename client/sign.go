package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
)

// SignRequest is the body of POST /v1/sign (contract section 2.1). The
// service validates it strictly and names every field at fault in the
// *Error's Details; the client does not repeat those rules, so that they
// live in one place.
type SignRequest struct {
	// Document is the PDF or DOCX to sign: exactly one of Base64 and URL.
	Document DocumentInput `json:"document"`
	// Signer is the person signing.
	Signer Signer `json:"signer"`
	// AuditTrail is the trail of the signer's interactions. It needs at
	// least one event, and at least one of type "submit".
	AuditTrail []AuditEvent `json:"auditTrail"`
	// EventID identifies this signing event in the caller's records.
	EventID string `json:"eventId,omitempty"`
	// Metadata is free-form application context attached to the event.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Certificate configures the audit-trail certificate page; nil keeps
	// the service's default (the page is appended).
	Certificate *CertificateConfig `json:"certificate,omitempty"`
}

// DocumentInput is a document sent for signing (contract section 2.2):
// its content in base64 or its location, never both.
type DocumentInput struct {
	Base64 string `json:"base64,omitempty"`
	URL    string `json:"url,omitempty"`
}

// DocumentFromBytes returns the input for a document held in memory.
func DocumentFromBytes(b []byte) DocumentInput {
	return DocumentInput{Base64: base64.StdEncoding.EncodeToString(b)}
}

// DocumentFromURL returns the input for a document the service downloads.
func DocumentFromURL(u string) DocumentInput { return DocumentInput{URL: u} }

// Signer is the person signing (contract section 2.3). IP and UserAgent
// are recorded in the audit trail and on the certificate page when set;
// other context belongs in SignRequest.Metadata.
type Signer struct {
	Email     string `json:"email"`
	Name      string `json:"name"`
	IP        string `json:"ip,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
}

// Audit event types known to be in use. "submit" must occur at least once.
const (
	AuditSubmit = "submit"
	AuditReady  = "ready"
)

// AuditEvent is one interaction of the signer (contract section 2.4).
type AuditEvent struct {
	Type      string         // e.g. AuditSubmit
	Timestamp time.Time      // sent in UTC
	Data      map[string]any // event-specific details; sent as {} when nil
}

// MarshalJSON writes the event as the contract has it: the timestamp as
// ISO 8601 in UTC whatever the time's location, and data always an object.
func (e AuditEvent) MarshalJSON() ([]byte, error) {
	data := e.Data
	if data == nil {
		data = map[string]any{}
	}
	return json.Marshal(struct {
		Type      string         `json:"type"`
		Timestamp string         `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}{e.Type, e.Timestamp.UTC().Format(time.RFC3339Nano), data})
}

// UnmarshalJSON reads what MarshalJSON writes, so that requests can be
// stored and replayed.
func (e *AuditEvent) UnmarshalJSON(b []byte) error {
	var v struct {
		Type      string         `json:"type"`
		Timestamp time.Time      `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = AuditEvent{Type: v.Type, Timestamp: v.Timestamp, Data: v.Data}
	return nil
}

// CertificateConfig configures the certificate page (contract section
// 2.5). Enabled nil keeps the service's default, which is to append it.
type CertificateConfig struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// Bool returns a pointer to v, for CertificateConfig.Enabled.
func Bool(v bool) *bool { return &v }

// SignResponse is the answer of POST /v1/sign (contract section 2.6).
type SignResponse struct {
	Document SignedDocument `json:"document"`
	// EventID is the signing event: the request's, or the one generated
	// for it. SHA256 is the hex SHA-256 of the signed PDF, as recorded.
	// Both are empty from a service that does not answer them.
	EventID string `json:"eventId,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
}

// SignedDocument is the signed file, base64-encoded.
type SignedDocument struct {
	Base64      string `json:"base64"`
	ContentType string `json:"contentType"` // application/pdf
}

// PDF decodes the signed file.
func (r *SignResponse) PDF() ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(r.Document.Base64)
	if err != nil {
		return nil, fmt.Errorf("quire client: sign answer: document.base64: %w", err)
	}
	return b, nil
}

// Sign signs a document (POST /v1/sign) and returns the signed PDF, with a
// certificate page carrying the audit trail unless the request turns it
// off. It needs an API key (WithAPIKey).
func (c *Client) Sign(ctx context.Context, req SignRequest) (*SignResponse, error) {
	r := request{method: "POST", path: "/v1/sign", contentType: "application/json", accept: "application/json", auth: true}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("quire client: %s: encoding the request: %w", r.op(), err)
	}
	r.body = bytes.NewReader(body)
	var res SignResponse
	if err := c.getJSON(ctx, r, &res); err != nil {
		return nil, err
	}
	if res.Document.Base64 == "" {
		return nil, fmt.Errorf("quire client: %s: the answer holds no document", r.op())
	}
	return &res, nil
}
