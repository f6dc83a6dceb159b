package client_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/client"
)

// These tests check the client's side of the wire against servers of
// their own: the encoding of requests and the decoding of answers of
// routes the real server does not serve yet, and answers a real quire
// server never gives (a proxy's error page, a hanging handler).

// fakeServer answers every request with handler and records the last one.
type fakeServer struct {
	*httptest.Server
	last *http.Request
	body []byte
}

func newFake(t *testing.T, handler http.HandlerFunc) *fakeServer {
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.body, _ = io.ReadAll(r.Body)
		f.last = r
		handler(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func TestSignEncodesTheContract(t *testing.T) {
	signed := []byte("%PDF-1.7 signed")
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"document": map[string]string{
			"base64": base64.StdEncoding.EncodeToString(signed), "contentType": "application/pdf"}})
	})
	req := client.SignRequest{
		Document: client.DocumentFromBytes([]byte("%PDF-1.4 input")),
		Signer:   client.Signer{Email: "ann@example.com", Name: "Ann Example", IP: "203.0.113.9", UserAgent: "Mozilla/5.0"},
		AuditTrail: []client.AuditEvent{
			{Type: client.AuditReady, Timestamp: time.Date(2026, 11, 22, 10, 0, 0, 0, time.FixedZone("CET", 3600))},
			{Type: client.AuditSubmit, Timestamp: time.Date(2026, 11, 22, 9, 1, 2, 345e6, time.UTC), Data: map[string]any{"button": "Sign"}},
		},
		EventID:     "evt_42",
		Metadata:    map[string]any{"contract": "C-7"},
		Certificate: &client.CertificateConfig{Enabled: client.Bool(false)},
	}
	res, err := client.New(f.URL, client.WithAPIKey("sd_k")).Sign(ctxFor(t), req)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if pdf, err := res.PDF(); err != nil || !bytes.Equal(pdf, signed) || res.Document.ContentType != "application/pdf" {
		t.Errorf("PDF() = %q, %v; content type %q", pdf, err, res.Document.ContentType)
	}

	if f.last.Method != "POST" || f.last.URL.Path != "/v1/sign" || f.last.Header.Get("Authorization") != "Bearer sd_k" ||
		f.last.Header.Get("Content-Type") != "application/json" || f.last.Header.Get("User-Agent") != client.DefaultUserAgent {
		t.Errorf("request %s %s, headers %v", f.last.Method, f.last.URL, f.last.Header)
	}
	var sent any
	if err := json.Unmarshal(f.body, &sent); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"document": map[string]any{"base64": base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 input"))},
		"signer":   map[string]any{"email": "ann@example.com", "name": "Ann Example", "ip": "203.0.113.9", "userAgent": "Mozilla/5.0"},
		"auditTrail": []any{
			map[string]any{"type": "ready", "timestamp": "2026-11-22T09:00:00Z", "data": map[string]any{}},
			map[string]any{"type": "submit", "timestamp": "2026-11-22T09:01:02.345Z", "data": map[string]any{"button": "Sign"}},
		},
		"eventId":     "evt_42",
		"metadata":    map[string]any{"contract": "C-7"},
		"certificate": map[string]any{"enabled": false},
	}
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("sent\n%s\nwant the fields of the contract", f.body)
	}

	// The optional fields are left out, not sent empty.
	minimal := client.SignRequest{Document: client.DocumentFromURL("https://files.example.com/a.pdf"),
		Signer: client.Signer{Email: "b@example.com", Name: "B"}, AuditTrail: []client.AuditEvent{{Type: "submit"}}}
	if _, err := client.New(f.URL).Sign(ctxFor(t), minimal); err != nil {
		t.Fatal(err)
	}
	if got := string(f.body); got != `{"document":{"url":"https://files.example.com/a.pdf"},"signer":{"email":"b@example.com","name":"B"},`+
		`"auditTrail":[{"type":"submit","timestamp":"0001-01-01T00:00:00Z","data":{}}]}` {
		t.Errorf("minimal request sent as %s", got)
	}
	if f.last.Header.Get("Authorization") != "" {
		t.Error("an Authorization header without a key")
	}

	var back client.SignRequest
	if err := json.Unmarshal(f.body, &back); err != nil || back.AuditTrail[0].Type != "submit" || back.Document.URL == "" {
		t.Errorf("a request does not decode back: %+v, %v", back, err)
	}
}

func TestSignRefusesAnAnswerWithoutDocument(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]any{}) })
	if _, err := client.New(f.URL).Sign(ctxFor(t), validSignRequest()); err == nil || !strings.Contains(err.Error(), "no document") {
		t.Errorf("error %v, want one about the missing document", err)
	}
	bad := client.SignResponse{Document: client.SignedDocument{Base64: "%%%"}}
	if _, err := bad.PDF(); err == nil {
		t.Error("PDF() accepts text that is not base64")
	}
}

func TestVerifySignatureDecodesTheResult(t *testing.T) {
	pdf := []byte("%PDF-1.7 signed document")
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, json.RawMessage(`{"valid":false,"reason":"the document was changed after signing","signers":[
			{"name":"Ann Example","email":"ann@example.com","subject":"CN=quire signing","signingTime":"2026-11-22T09:01:02Z","eventId":"evt-9","signerEmail":"ann@example.com",
			 "coversWholeDocument":false,"trusted":true,"valid":false,"reason":"bytes added after the signature",
			 "level":"PAdES-BASELINE-B","indication":"TOTAL_FAILED","subIndication":"FORMAT_FAILURE","revocation":{"crl":1,"ocsp":0,"where":"dss"},
			 "modifications":{"level":"other","permitted":false,"changes":[{"object":5,"page":1,"class":"other","what":"content or resources of the page changed","permitted":false}]}}]}`))
	})

	res, err := client.New(f.URL, client.WithAPIKey("sd_k")).VerifySignature(ctxFor(t), pdf)
	if err != nil {
		t.Fatalf("VerifySignature: %v", err)
	}
	want := &client.VerifyResult{Valid: false, Reason: "the document was changed after signing", Signers: []client.VerifiedSigner{{
		Name: "Ann Example", Email: "ann@example.com", Subject: "CN=quire signing", SigningTime: time.Date(2026, 11, 22, 9, 1, 2, 0, time.UTC), EventID: "evt-9", SignerEmail: "ann@example.com",
		CoversWholeDocument: false, Trusted: true, Valid: false, Reason: "bytes added after the signature",
		Level: ptr("PAdES-BASELINE-B"), Indication: "TOTAL_FAILED", SubIndication: ptr("FORMAT_FAILURE"), Revocation: client.Revocation{CRL: 1, Where: "dss"},
		Modifications: client.Modifications{Level: "other", Changes: []client.Change{{Object: 5, Page: 1, Class: "other", What: "content or resources of the page changed"}}}}}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result %+v\nwant %+v", res, want)
	}
	name, contentType, data := f.filePart(t)
	if !bytes.Equal(data, pdf) || name != "document.pdf" || contentType != "application/pdf" || f.last.URL.Path != "/v1/verify" {
		t.Errorf("the server got %q (%s, %s) at %s", data, name, contentType, f.last.URL.Path)
	}
}

func ptr(s string) *string { return &s }

// filePart decodes the last request's body as multipart/form-data with a
// single part "file".
func (f *fakeServer) filePart(t *testing.T) (filename, contentType string, data []byte) {
	t.Helper()
	_, params, err := mime.ParseMediaType(f.last.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", f.last.Header.Get("Content-Type"), err)
	}
	form, err := multipart.NewReader(bytes.NewReader(f.body), params["boundary"]).ReadForm(1 << 20)
	if err != nil || len(form.File["file"]) != 1 || len(form.File) != 1 || len(form.Value) != 0 {
		t.Fatalf("form %+v, %v: want one part, file", form, err)
	}
	h := form.File["file"][0]
	file, err := h.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	data, _ = io.ReadAll(file)
	return h.Filename, h.Header.Get("Content-Type"), data
}

func TestSigningCertificate(t *testing.T) {
	der, cert := selfSigned(t)
	sum := sha256.Sum256(der)
	answer := map[string]any{"pem": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		"fingerprintSha256": hex.EncodeToString(sum[:]), "notBefore": cert.NotBefore, "notAfter": cert.NotAfter,
		"issuerDn": cert.Issuer.String(), "subject": cert.Subject.String(), "issuer": "quire test", "algorithm": "ECDSA-SHA256"}
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, answer) })

	sc, err := client.New(f.URL).SigningCertificate(ctxFor(t))
	if err != nil {
		t.Fatalf("SigningCertificate: %v", err)
	}
	if f.last.URL.Path != "/v1/verify/key" || sc.Subject != "CN=quire test signing" || sc.IssuerDN != sc.Subject || sc.Issuer != "quire test" || sc.Algorithm != "ECDSA-SHA256" ||
		!sc.NotBefore.Equal(cert.NotBefore) || !sc.NotAfter.Equal(cert.NotAfter) {
		t.Errorf("certificate %+v", sc)
	}
	parsed, err := sc.Certificate()
	if err != nil || !parsed.Equal(cert) {
		t.Fatalf("Certificate() = %v, %v", parsed, err)
	}
	// The fingerprint may come with colons and in upper case.
	sc.FingerprintSHA256 = strings.ToUpper(colons(sc.FingerprintSHA256))
	if _, err := sc.Certificate(); err != nil {
		t.Errorf("colon-separated fingerprint: %v", err)
	}
	sc.FingerprintSHA256 = strings.Repeat("00", 32)
	if _, err := sc.Certificate(); err == nil {
		t.Error("a fingerprint of another certificate is accepted")
	}
	sc.PEM = "no PEM here"
	if _, err := sc.Certificate(); err == nil {
		t.Error("text without PEM is accepted")
	}
}

func colons(h string) string {
	var parts []string
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}

func selfSigned(t *testing.T) ([]byte, *x509.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "quire test signing"},
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return der, cert
}

func TestAnswerThatIsNotTheErrorBody(t *testing.T) {
	retryAt := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Retry-After", retryAt)
		w.Header().Set("X-Request-Id", "proxy-req-1")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
	})
	_, err := client.New(f.URL).Health(ctxFor(t))
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *client.Error", err, err)
	}
	if e.Status != 502 || e.Code != "" || e.Message != "Bad Gateway" || e.RequestID != "proxy-req-1" ||
		e.RetryAfter < 80*time.Second || e.RetryAfter > 90*time.Second {
		t.Errorf("error %+v", e)
	}
}

func TestHealthUnavailableWithoutHealthFields(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "5")
		writeJSON(w, 503, map[string]any{"code": "SERVICE_UNAVAILABLE", "error": "Service Unavailable",
			"message": "Down for maintenance.", "requestId": "r1"})
	})
	h, err := client.New(f.URL).Health(ctxFor(t))
	if h != nil || client.ErrorCode(err) != client.CodeUnavailable {
		t.Errorf("Health = %+v, %v", h, err)
	}
	if e := (*client.Error)(nil); errors.As(err, &e) && e.RetryAfter != 5*time.Second {
		t.Errorf("RetryAfter %v", e.RetryAfter)
	}
}

func TestBaseURLWithAPath(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"status": "healthy", "timestamp": "2026-11-22T15:40:00Z", "checks": map[string]string{}})
	})
	for _, base := range []string{f.URL + "/quire", f.URL + "/quire/"} {
		if _, err := client.New(base, client.WithUserAgent("acme-billing/2")).Health(ctxFor(t)); err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if f.last.URL.Path != "/quire/v1/health" || f.last.Header.Get("User-Agent") != "acme-billing/2" {
			t.Errorf("base %s: request to %s with User-Agent %q", base, f.last.URL.Path, f.last.Header.Get("User-Agent"))
		}
	}
	for _, bad := range []string{"", "quire.example.com", "ftp://quire.example.com", "https://quire.example.com/?x=1",
		"http://[::1", "http://ann:s3cret@[::1", "https://ann:s3cret@quire.example.com/#top"} {
		_, err := client.New(bad).Health(ctxFor(t))
		if err == nil || !strings.Contains(err.Error(), "base URL") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("base URL %q: error %v", bad, err)
		}
	}
}

func TestContextCancellationAbortsTheRequest(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select { // the handler blocks until the client goes away
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-entered; cancel() }()
	// The handler answers only when the test ends: a call that ignored
	// its context would hang the test.
	_, err := client.New(srv.URL).Health(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "GET /v1/health") {
		t.Fatalf("error %v, want context.Canceled naming the call", err)
	}
	var e *client.Error
	if errors.As(err, &e) {
		t.Error("a cancellation is reported as an answer of the service")
	}
}

func TestContextDeadlineAbortsAnUpload(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // never reads the upload, never answers
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: lets Close end the handler

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	src := newCountingReader(50 << 20)
	// The handler answers only when the test ends: a call that ignored its
	// deadline would hang the test.
	_, err := client.New(srv.URL).Convert(ctx, src, "big.docx", "docx")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want context.DeadlineExceeded", err)
	}
	// The upload stopped with the request: only what the connection could
	// hold was read.
	if n := src.read.Load(); n >= 50<<20 {
		t.Errorf("the whole input (%d bytes) was read for a request that was never answered", n)
	}
}

func TestTransportErrorsHideTheQuery(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there now
	_, err := client.New(addr).Verify(ctxFor(t), "dora@example.com", "123456")
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	if strings.Contains(err.Error(), "123456") || strings.Contains(err.Error(), "dora") {
		t.Errorf("error %q holds the query", err)
	}
	var ue *url.Error
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "GET /v1/auth/verify") {
		t.Errorf("error %v: want a *url.Error naming the call", err)
	}
}
