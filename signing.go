package quire

import "time"

// Signing is the record of one signature quire applied, kept so that
// verification can name the signing event. It never holds document content.
type Signing struct {
	SignedDigest string // hex SHA-256 over the signature's byte ranges
	EventID      string
	InputSHA256  string // the document as received
	OutputSHA256 string // the signed PDF as returned
	SignerEmail  string
	APIKeyID     string
	SignedAt     time.Time
	AuditTrail   []AuditEvent // as the sign request gave it; empty in records made before quire kept it
}

// AuditEvent is one interaction of the signer (spec 2.4), as a sign request
// carries it and verification shows it.
type AuditEvent struct {
	Type      string         `json:"type"`
	Timestamp time.Time      `json:"timestamp"`
	Data      map[string]any `json:"data,omitempty"`
}
