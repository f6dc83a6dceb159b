package httpapi

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
)

const minimal = `{"document":{"base64":"JVBERi0xLjcK"},"signer":{"email":"ann@example.com","name":"Ann Example"},
	"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z","data":{}}]}`

// details decodes body and validates the request, as the sign route and
// the signing service do.
func details(t *testing.T, body string) map[string]string {
	t.Helper()
	r, err := decodeSignRequest([]byte(body), 1<<20)
	if err == nil {
		err = r.Validate()
	}
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
	t.Parallel()
	r, err := decodeSignRequest([]byte(minimal), 1<<20)
	if err == nil {
		err = r.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Document.Bytes) != "%PDF-1.7\n" || r.Signer.Name != "Ann Example" || !r.Certificate || r.EventID != "" ||
		len(r.AuditTrail) != 1 || r.AuditTrail[0].Timestamp.Year() != 2026 {
		t.Errorf("request %+v", r)
	}
}

func TestDecodeFull(t *testing.T) {
	t.Parallel()
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 whatever"))
	body := `{"document":{"base64":"data:application/pdf;base64,` + pdf + `"},
		"signer":{"email":"Ann@Example.com","name":" Ann ","ip":"2001:db8::1","userAgent":"Mozilla/5.0"},
		"auditTrail":[{"type":"ready","timestamp":"2026-11-22T09:59:00.123Z"},
			{"type":"field_change","timestamp":"2026-11-22T10:59:30+01:00","data":{"fieldId":"f1","value":"yes"}},
			{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}],
		"eventId":"evt-42","metadata":{"contract":"C-7"},"certificate":{"enabled":false}}`
	r, err := decodeSignRequest([]byte(body), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Document.Bytes) != "%PDF-1.4 whatever" || r.Signer.Name != "Ann" || r.Signer.IP != "2001:db8::1" || r.EventID != "evt-42" ||
		r.Certificate || r.Metadata["contract"] != "C-7" || r.AuditTrail[1].Data["fieldId"] != "f1" ||
		r.AuditTrail[1].Timestamp != time.Date(2026, 11, 22, 9, 59, 30, 0, time.UTC) || r.AuditTrail[1].Timestamp.Location() != time.UTC {
		t.Errorf("request %+v", r)
	}
}

func TestDecodeRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, field, issue string }{
		{`[]`, "body", "must be a JSON object"},
		{`{}`, "document", "is required"},
		{`{}`, "signer", "is required"},
		{`{}`, "auditTrail", "is required"},
		{strings.Replace(minimal, `"base64":"JVBERi0xLjcK"`, `"base64":"JVBERi0xLjcK","url":"https://example.com/a.pdf"`, 1), "document", "must hold exactly one of base64 and url"},
		{strings.Replace(minimal, `"base64":"JVBERi0xLjcK"`, `"base64":""`, 1), "document", "must hold exactly one of base64 and url"},
		{strings.Replace(minimal, `"JVBERi0xLjcK"`, `"not base64!"`, 1), "document.base64", "is not valid base64"},
		{strings.Replace(minimal, `"JVBERi0xLjcK"`, `"data:text/plain,hello"`, 1), "document.base64", "a data: URI must be base64-encoded (data:application/pdf;base64,...)"},
		{strings.Replace(minimal, `"email":"ann@example.com",`, ``, 1), "signer.email", "is required"},
		{strings.Replace(minimal, `"ann@example.com"`, `"ann"`, 1), "signer.email", "is not a valid e-mail address"},
		{strings.Replace(minimal, `"Ann Example"`, `"  "`, 1), "signer.name", "is required"},
		{strings.Replace(minimal, `"Ann Example"`, `"A"`, 1), "signer.name", "must be 2 to 255 characters"},
		{strings.Replace(minimal, `"Ann Example"`, `"`+strings.Repeat("A", 256)+`"`, 1), "signer.name", "must be 2 to 255 characters"},
		{strings.Replace(minimal, `"Ann Example"`, `"Ann\u0007"`, 1), "signer.name", "must not contain control characters"},
		{strings.Replace(minimal, `"Ann Example"`, `42`, 1), "signer.name", "must be a string"},
		{strings.Replace(minimal, `"name":"Ann Example"`, `"name":"Ann","ip":"localhost"`, 1), "signer.ip", "must be an IPv4 or IPv6 address"},
		{strings.Replace(minimal, `"name":"Ann Example"`, `"name":"Ann","phone":"1"`, 1), "signer.phone", "is not a known field (known: email, name, ip, userAgent)"},
		{strings.Replace(minimal, `"name":"Ann Example"`, `"name":"Ann","emial":"1"`, 1), "signer.emial", "is not a known field; did you mean email?"},
		{strings.Replace(minimal, `"signer"`, `"certificate":{"enabel":true},"signer"`, 1), "certificate.enabel", "is not a known field; did you mean enabled?"},
		{strings.Replace(minimal, `"signer"`, `"certificate":{"enable":true,"enabled":false},"signer"`, 1), "certificate.enable", "contradicts certificate.enabled"},
		{strings.Replace(minimal, `"signer"`, `"certificate":{"enabled":"yes"},"signer"`, 1), "certificate.enabled", "must be a boolean"},
		{strings.Replace(minimal, `"signer"`, `"auditTrial":[],"signer"`, 1), "auditTrial", "is not a known field; did you mean auditTrail?"},
		{strings.Replace(minimal, `"document"`, `"metadata":[1],"document"`, 1), "metadata", "must be an object"},
		{strings.Replace(minimal, `[{"type":"submit","timestamp":"2026-11-22T10:00:00Z","data":{}}]`, `[]`, 1), "auditTrail", "must hold at least 1 event"},
		{strings.Replace(minimal, `"type":"submit"`, `"type":"ready"`, 1), "auditTrail", "must contain at least one event of type submit"},
		{strings.Replace(minimal, `"type":"submit"`, `"type":"Submit!"`, 1), "auditTrail[0].type", "must be a lowercase identifier such as ready, scroll, field_change or submit"},
		{strings.Replace(minimal, `"2026-11-22T10:00:00Z"`, `"22/11/2026"`, 1), "auditTrail[0].timestamp",
			"must be an RFC 3339 date-time such as 2026-11-22T10:00:00Z or 2026-11-22T11:00:00+01:00"},
		{strings.Replace(minimal, `"ann@example.com"`, `"ann@example.com","ip":"localhost"`, 1) + `x`, "body", "must be a JSON object"},
		{strings.Replace(minimal, `"signer"`, `"eventId":"`+strings.Repeat("x", 129)+`","signer"`, 1), "eventId", "must be at most 128 characters"},
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
	t.Parallel()
	got := details(t, `{"document":{},"signer":{"name":"","email":42},"auditTrail":[{"type":"ready"}],"extra":true}`)
	for _, f := range []string{"document", "signer.email", "signer.name", "auditTrail[0].timestamp", "auditTrail", "extra"} {
		if got[f] == "" {
			t.Errorf("no detail for %s: %v", f, got)
		}
	}
	if got["signer.email"] != "must be a string" {
		t.Errorf("a field that did not decode is reported for its type only: %v", got)
	}
}

// TestCertificateEnableIsASynonym: the hosted API's e-sign demo sends
// certificate.enable.
func TestCertificateEnableIsASynonym(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]bool{
		strings.Replace(minimal, `"signer"`, `"certificate":{"enable":false},"signer"`, 1):                 false,
		strings.Replace(minimal, `"signer"`, `"certificate":{"enable":true},"signer"`, 1):                  true,
		strings.Replace(minimal, `"signer"`, `"certificate":{"enabled":false},"signer"`, 1):                false,
		strings.Replace(minimal, `"signer"`, `"certificate":{"enabled":false,"enable":false},"signer"`, 1): false,
		strings.Replace(minimal, `"signer"`, `"certificate":{},"signer"`, 1):                               true,
	} {
		r, err := decodeSignRequest([]byte(body), 1<<20)
		if err != nil || r.Certificate != want {
			t.Errorf("%.120s: certificate %v (%v), want %v", body, r.Certificate, err, want)
		}
	}
}

func TestDecodeVerifyRequest(t *testing.T) {
	t.Parallel()
	if d, err := decodeVerifyRequest([]byte(`{"document":{"url":"https://example.com/a.pdf"}}`), 1<<20); err != nil || d.URL != "https://example.com/a.pdf" {
		t.Errorf("url: %+v %v", d, err)
	}
	if d, err := decodeVerifyRequest([]byte(`{"document":{"base64":"JVBERi0xLjcK"}}`), 1<<20); err != nil || string(d.Bytes) != "%PDF-1.7\n" {
		t.Errorf("base64: %+v %v", d, err)
	}
	// Neither or both of base64 and url decode: the service refuses them
	// (signing's TestVerifyRefusesTwoDocuments).
	for body, field := range map[string]string{`{"documnet":{}}`: "documnet",
		`{"document":{"url":1}}`: "document.url"} {
		_, err := decodeVerifyRequest([]byte(body), 1<<20)
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.Message != "The verify request is not valid." || !slices.ContainsFunc(qe.Details, func(d quire.Detail) bool { return d.Field == field }) {
			t.Errorf("%s: %v, want the verify request's own message about %s", body, err, field)
		}
	}
}

func TestDecodeDocumentLimit(t *testing.T) {
	t.Parallel()
	big := base64.StdEncoding.EncodeToString(make([]byte, 2000))
	r, err := decodeSignRequest([]byte(strings.Replace(minimal, `"JVBERi0xLjcK"`, `"`+big+`"`, 1)), 1000)
	if err == nil {
		err = r.Validate()
	}
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Details[0].Field != "document.base64" || !strings.Contains(qe.Details[0].Issue, "larger than the limit of 1000 bytes") {
		t.Errorf("a 2000-byte document under a 1000-byte limit: %v", err)
	}
}

func TestDecodeDocumentAhead(t *testing.T) {
	t.Parallel()
	pdf := []byte("%PDF-1.7 the whole document \xff\xff\xff") // \xff\xff\xff: "////"
	b64 := base64.StdEncoding.EncodeToString(pdf)
	withSlash := strings.ReplaceAll(b64, "/", `\/`) // an escape JSON allows
	rest := `"signer":{"email":"ann@example.com","name":"Ann Example"},"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}]`
	for _, c := range []struct {
		name, body string
		ahead      bool
	}{
		{"plain", `{"document":{"base64":"` + b64 + `"},` + rest + `}`, true},
		{"white space around", ` { "document" : { "base64" : "` + b64 + `" } , ` + rest + `} `, true},
		{"unpadded", `{"document":{"base64":"` + strings.TrimRight(b64, "=") + `"},` + rest + `}`, true},
		{"line breaks", `{"document":{"base64":"` + b64[:8] + `\n` + b64[8:] + `"},` + rest + `}`, false},
		{"escaped slash", `{"document":{"base64":"` + withSlash + `"},` + rest + `}`, false},
		{"escaped key", `{"document":{"b\u0061se64":"` + b64 + `"},` + rest + `}`, false},
		{"data URI", `{"document":{"base64":"data:application/pdf;base64,` + b64 + `"},` + rest + `}`, false},
		{"nested look-alike", `{"metadata":{"document":{"base64":"eA=="}},"document":{"base64":"` + b64 + `"},` + rest + `}`, true},
		{"two documents", `{"document":{"base64":"eA=="},"document":{"base64":"` + b64 + `"},` + rest + `}`, false},
	} {
		d, _ := newDecoder([]byte(c.body), 1<<20, signingRoom)
		if ahead := d.inline != nil; ahead != c.ahead {
			t.Errorf("%s: decoded ahead %v, want %v", c.name, ahead, c.ahead)
		}
		r, err := decodeSignRequest([]byte(c.body), 1<<20)
		if err != nil || string(r.Document.Bytes) != string(pdf) {
			t.Errorf("%s: document %q, %v", c.name, r.Document.Bytes, err)
		}
		if c.ahead && cap(r.Document.Bytes)-len(r.Document.Bytes) < signingRoom {
			t.Errorf("%s: no room for the signing after the document", c.name)
		}
	}
	// A body that is not JSON around a plain document is refused as before,
	// and so is a raw line break in the document, which base64 would skip.
	for name, body := range map[string]string{
		"broken JSON":    `{"document":{"base64":"` + b64 + `"},` + rest + `,}`,
		"raw line break": `{"document":{"base64":"` + b64[:8] + "\n" + b64[8:] + `"},` + rest + `}`,
		"raw return":     `{"document":{"base64":"` + b64[:8] + "\r" + b64[8:] + `"},` + rest + `}`,
	} {
		if got := details(t, body); got["body"] != "must be a JSON object" {
			t.Errorf("%s: %v", name, got)
		}
	}
}

// FuzzDecodeDocumentAhead: decoding the document ahead of the JSON
// decoder changes nothing in what a body decodes to, or in how it is
// refused.
func FuzzDecodeDocumentAhead(f *testing.F) {
	b64 := base64.StdEncoding.EncodeToString([]byte("%PDF-1.7 \xff\xff\xff"))
	f.Add([]byte(minimal))
	f.Add([]byte(`{"document":{"base64":"` + b64 + `"},"signer":{"email":"a@example.com","name":"Ann"},"auditTrail":[]}`))
	f.Add([]byte(`{"metadata":{"document":{"base64":"eA=="}},"document":{"base64":"` + b64 + `","url":"x"}}`))
	f.Add([]byte(`{"document":{"b\u0061se64":"` + b64 + `"},"document":{"base64":"eA"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gotErr := decodeSignRequest(body, 1<<10)
		want, wantErr := (&decoder{}).signRequest(body, 1<<10)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded ahead: %+v, %v\nas before: %+v, %v", got, gotErr, want, wantErr)
		}
	})
}

// TestDecodeAnnotateDocumentAhead: annotate's template takes the sign
// document's path: plain base64 is decoded once, ahead of the JSON
// decoder, which then does not copy it again and again.
func TestDecodeAnnotateDocumentAhead(t *testing.T) {
	docx := make([]byte, 4<<20)
	for i := range docx {
		docx[i] = byte(i * 7)
	}
	body := []byte(`{"document":{"base64":"` + base64.StdEncoding.EncodeToString(docx) + `"},"fields":[{"id":"1","type":"text","value":"Ann"}]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	req, err := decodeAnnotate(body, url.Values{"to": {"docx"}}, 8<<20)
	runtime.ReadMemStats(&after)
	if err != nil || len(req.Malformed) > 0 || !bytes.Equal(req.Document.Bytes, docx) || len(req.Fields) != 1 || req.Fields[0].Value != "Ann" {
		t.Fatalf("decoded %d bytes, fields %+v, malformed %v, %v", len(req.Document.Bytes), req.Fields, req.Malformed, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 2*uint64(len(docx)) {
		t.Errorf("decoding a %d-byte template allocated %d bytes, want at most twice its size", len(docx), n)
	}
}
