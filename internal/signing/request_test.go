package signing

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
)

const minimal = `{"document":{"base64":"JVBERi0xLjcK"},"signer":{"email":"ann@example.com","name":"Ann Example"},
	"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z","data":{}}]}`

func details(t *testing.T, body string) map[string]string {
	t.Helper()
	_, err := DecodeRequest([]byte(body), 1<<20)
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Code != quire.CodeValidation {
		t.Fatalf("%s: error %v, want VALIDATION_ERROR", body, err)
	}
	out := map[string]string{}
	for _, d := range qe.Details {
		out[d.Field] = d.Issue
	}
	return out
}

func TestDecodeMinimal(t *testing.T) {
	r, err := DecodeRequest([]byte(minimal), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Document.Bytes) != "%PDF-1.7\n" || r.Signer.Name != "Ann Example" || !r.Certificate || len(r.EventID) != 36 ||
		len(r.AuditTrail) != 1 || r.AuditTrail[0].Timestamp.Year() != 2026 {
		t.Errorf("request %+v", r)
	}
}

func TestDecodeFull(t *testing.T) {
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 whatever"))
	body := `{"document":{"base64":"data:application/pdf;base64,` + pdf + `"},
		"signer":{"email":"Ann@Example.com","name":" Ann ","ip":"2001:db8::1","userAgent":"Mozilla/5.0"},
		"auditTrail":[{"type":"ready","timestamp":"2026-11-22T09:59:00.123Z"},
			{"type":"field_change","timestamp":"2026-11-22T09:59:30+00:00","data":{"fieldId":"f1","value":"yes"}},
			{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}],
		"eventId":"evt-42","metadata":{"contract":"C-7"},"certificate":{"enabled":false}}`
	r, err := DecodeRequest([]byte(body), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Document.Bytes) != "%PDF-1.4 whatever" || r.Signer.Name != "Ann" || r.Signer.IP != "2001:db8::1" || r.EventID != "evt-42" ||
		r.Certificate || r.Metadata["contract"] != "C-7" || r.AuditTrail[1].Data["fieldId"] != "f1" {
		t.Errorf("request %+v", r)
	}
}

func TestDecodeRefusals(t *testing.T) {
	for _, c := range []struct{ body, field, issue string }{
		{`[]`, "body", "must be a JSON object"},
		{`{}`, "document", "is required"},
		{`{}`, "signer", "is required"},
		{`{}`, "auditTrail", "is required"},
		{strings.Replace(minimal, `"base64":"JVBERi0xLjcK"`, `"base64":"JVBERi0xLjcK","url":"https://example.com/a.pdf"`, 1), "document", "must hold exactly one of base64 and url"},
		{strings.Replace(minimal, `"base64":"JVBERi0xLjcK"`, `"base64":""`, 1), "document", "must hold exactly one of base64 and url"},
		{strings.Replace(minimal, `"JVBERi0xLjcK"`, `"not base64!"`, 1), "document.base64", "is not valid base64"},
		{strings.Replace(minimal, `"JVBERi0xLjcK"`, `"data:text/plain,hello"`, 1), "document.base64", "a data: URI must be base64-encoded (data:<media type>;base64,...)"},
		{strings.Replace(minimal, `"email":"ann@example.com",`, ``, 1), "signer.email", "is required"},
		{strings.Replace(minimal, `"ann@example.com"`, `"ann"`, 1), "signer.email", "is not a valid e-mail address"},
		{strings.Replace(minimal, `"Ann Example"`, `"  "`, 1), "signer.name", "must not be empty"},
		{strings.Replace(minimal, `"Ann Example"`, `42`, 1), "signer.name", "must be a string"},
		{strings.Replace(minimal, `"name":"Ann Example"`, `"name":"Ann","ip":"localhost"`, 1), "signer.ip", "must be an IPv4 or IPv6 address"},
		{strings.Replace(minimal, `"name":"Ann Example"`, `"name":"Ann","phone":"1"`, 1), "signer.phone", "is not a known field (known: email, name, ip, userAgent)"},
		{strings.Replace(minimal, `"name":"Ann Example"`, `"name":"Ann","emial":"1"`, 1), "signer.emial", "is not a known field; did you mean email?"},
		{strings.Replace(minimal, `"signer"`, `"certificate":{"enable":true},"signer"`, 1), "certificate.enable", "is not a known field; did you mean enabled?"},
		{strings.Replace(minimal, `"signer"`, `"certificate":{"enabled":"yes"},"signer"`, 1), "certificate.enabled", "must be a boolean"},
		{strings.Replace(minimal, `"signer"`, `"auditTrial":[],"signer"`, 1), "auditTrial", "is not a known field; did you mean auditTrail?"},
		{strings.Replace(minimal, `"document"`, `"metadata":[1],"document"`, 1), "metadata", "must be an object"},
		{strings.Replace(minimal, `[{"type":"submit","timestamp":"2026-11-22T10:00:00Z","data":{}}]`, `[]`, 1), "auditTrail", "must hold at least 1 event"},
		{strings.Replace(minimal, `"type":"submit"`, `"type":"ready"`, 1), "auditTrail", "must contain at least one event of type submit"},
		{strings.Replace(minimal, `"type":"submit"`, `"type":"Submit!"`, 1), "auditTrail[0].type", "must be a lowercase identifier such as ready, scroll, field_change or submit"},
		{strings.Replace(minimal, `"2026-11-22T10:00:00Z"`, `"22/11/2026"`, 1), "auditTrail[0].timestamp", "must be an ISO 8601 date-time in UTC such as 2026-11-22T10:00:00Z"},
		{strings.Replace(minimal, `"2026-11-22T10:00:00Z"`, `"2026-11-22T11:00:00+01:00"`, 1), "auditTrail[0].timestamp", "must be in UTC (Z or +00:00)"},
		{strings.Replace(minimal, `"data":{}`, `"data":{},"extra":1`, 1), "auditTrail[0].extra", "is not a known field (known: type, timestamp, data)"},
		{strings.Replace(minimal, `"data":{}`, `"data":"x"`, 1), "auditTrail[0].data", "must be an object"},
	} {
		got := details(t, c.body)
		if got[c.field] != c.issue {
			t.Errorf("%.70s...\n  %s: got %q, want %q (all: %v)", c.body, c.field, got[c.field], c.issue, got)
		}
	}
}

func TestDecodeReportsEveryBadField(t *testing.T) {
	got := details(t, `{"document":{},"signer":{"name":""},"auditTrail":[{"type":"ready"}],"extra":true}`)
	for _, f := range []string{"document", "signer.email", "signer.name", "auditTrail[0].timestamp", "auditTrail", "extra"} {
		if got[f] == "" {
			t.Errorf("no detail for %s: %v", f, got)
		}
	}
}

func TestDecodeDocumentLimit(t *testing.T) {
	big := base64.StdEncoding.EncodeToString(make([]byte, 2000))
	_, err := DecodeRequest([]byte(strings.Replace(minimal, `"JVBERi0xLjcK"`, `"`+big+`"`, 1)), 1000)
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Details[0].Field != "document.base64" || !strings.Contains(qe.Details[0].Issue, "larger than the limit of 1000 bytes") {
		t.Errorf("a 2000-byte document under a 1000-byte limit: %v", err)
	}
}
