package signing

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
)

func valid() Request {
	return Request{Document: Document{Bytes: []byte("%PDF-1.7\n")}, Signer: Signer{Email: "ann@example.com", Name: "Ann"},
		AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}}}
}

func TestValidateAcceptsAValidRequest(t *testing.T) {
	t.Parallel()
	r := valid()
	r.Signer.Name = strings.Repeat("Å", MaxNameLength) // characters, not bytes
	r.Signer.IP, r.EventID = "2001:db8::1", strings.Repeat("e", MaxEventIDLength)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestValidateReportsEveryBadField breaks every field at once: each is
// named in one answer.
func TestValidateReportsEveryBadField(t *testing.T) {
	t.Parallel()
	r := Request{Document: Document{Bytes: []byte("%PDF"), URL: "https://example.com/a.pdf"},
		Signer:     Signer{Email: "not-an-email", Name: strings.Repeat("A", 256), IP: "localhost", UserAgent: "x\x00y"},
		AuditTrail: []AuditEvent{{Type: "Ready!"}, {Type: "ready", Timestamp: time.Now(), Data: map[string]any{"png": strings.Repeat("x", MaxEventDataBytes)}}},
		EventID:    strings.Repeat("x", 400), Metadata: map[string]any{"big": strings.Repeat("x", MaxMetadataBytes)}}
	var qe *quire.Error
	if err := r.Validate(); !errors.As(err, &qe) || qe.Code != quire.CodeValidation {
		t.Fatalf("error %v, want VALIDATION_ERROR", err)
	}
	got := map[string]string{}
	for _, d := range qe.Details {
		got[d.Field] = d.Issue
	}
	for field, issue := range map[string]string{
		"document":                "must hold exactly one of base64 and url",
		"signer.email":            "is not a valid e-mail address",
		"signer.name":             "must be 2 to 255 characters",
		"signer.ip":               "must be an IPv4 or IPv6 address",
		"signer.userAgent":        "must not contain control characters",
		"auditTrail[0].type":      "must be a lowercase identifier such as ready, scroll, field_change or submit",
		"auditTrail[0].timestamp": "is required",
		"auditTrail[1].data":      "must be at most 2097152 bytes of JSON",
		"auditTrail":              "must contain at least one event of type submit",
		"eventId":                 "must be at most 128 characters",
		"metadata":                "must be at most 16384 bytes of JSON",
	} {
		if got[field] != issue {
			t.Errorf("%s: %q, want %q", field, got[field], issue)
		}
	}
}
