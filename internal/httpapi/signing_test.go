package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func signBody(document string) string {
	return `{"document":` + document + `,"signer":{"email":"ann@example.com","name":"Ann Example","ip":"203.0.113.9"},
		"auditTrail":[{"type":"ready","timestamp":"2026-11-22T09:59:00Z"},{"type":"submit","timestamp":"2026-11-22T10:00:00Z","data":{}}],
		"eventId":"evt-1","certificate":{"enabled":false}}`
}

func inline(pdf []byte) string { return `{"base64":"` + base64.StdEncoding.EncodeToString(pdf) + `"}` }

func (e *env) signPDF(key, body string) response {
	e.t.Helper()
	return e.do("POST", "/v1/sign", strings.NewReader(body), map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
}

func signedPDF(t *testing.T, r response) []byte {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("sign: %d %s", r.status, r.body)
	}
	var res struct {
		Document struct{ Base64, ContentType string }
	}
	r.json(t, &res)
	pdf, err := base64.StdEncoding.DecodeString(res.Document.Base64)
	if err != nil || res.Document.ContentType != "application/pdf" || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("sign answer: %v %q", err, res.Document.ContentType)
	}
	return pdf
}

func (e *env) verifyPDF(pdf []byte) signing.VerifyResult {
	e.t.Helper()
	body, ctype := multipartFile("file", "signed.pdf", pdf)
	r := e.do("POST", "/v1/verify", bytes.NewReader(body), map[string]string{"Content-Type": ctype})
	if r.status != 200 {
		e.t.Fatalf("verify: %d %s", r.status, r.body)
	}
	var res signing.VerifyResult
	r.json(e.t, &res)
	return res
}

// tool runs a validator, failing the test with the Debian package to
// install when it is missing.
func tool(t *testing.T, pkg, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is not installed: apt-get install %s", name, pkg)
	}
	out, _ := exec.Command(name, args...).CombinedOutput()
	return string(out)
}

func TestSignAndVerify(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends {
		t.Run(b, func(t *testing.T) {
			e := newEnv(t, storetest.Open(t, storetest.URL(t, b)), unlimited())
			key := e.key("ann@example.com")
			in := pdftest.OnePage("Service agreement")
			out := signedPDF(t, e.signPDF(key, signBody(inline(in))))
			if !bytes.HasPrefix(out, in) {
				t.Error("the original bytes are not a prefix of the signed PDF")
			}
			path := pdftest.WriteTemp(t, out)
			if got := tool(t, "poppler-utils", "pdfsig", path); !strings.Contains(got, "Signature is Valid.") || !strings.Contains(got, "Total document signed") {
				t.Errorf("pdfsig:\n%s", got)
			}
			if got := tool(t, "qpdf", "qpdf", "--check", path); !strings.Contains(got, "No syntax or stream encoding errors") {
				t.Errorf("qpdf --check:\n%s", got)
			}

			res := e.verifyPDF(out)
			if !res.Valid || len(res.Signers) != 1 || res.Signers[0].EventID != "evt-1" || res.Signers[0].SignerEmail != "ann@example.com" {
				t.Fatalf("verify = %+v", res)
			}
			wantTrail := []quire.AuditEvent{{Type: "ready", Timestamp: time.Date(2026, 11, 22, 9, 59, 0, 0, time.UTC)},
				{Type: "submit", Timestamp: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}}
			if !reflect.DeepEqual(res.Signers[0].AuditTrail, wantTrail) {
				t.Errorf("the recorded audit trail = %+v, want %+v", res.Signers[0].AuditTrail, wantTrail)
			}

			tampered := bytes.Clone(out)
			tampered[len(in)/2] ^= 0x01
			if res := e.verifyPDF(tampered); res.Valid || res.Signers[0].Valid || res.Signers[0].AuditTrail != nil {
				t.Errorf("a flipped byte still verifies: %+v", res)
			}
			if got := tool(t, "poppler-utils", "pdfsig", pdftest.WriteTemp(t, tampered)); strings.Contains(got, "Signature is Valid.") {
				t.Errorf("pdfsig accepts the tampered file:\n%s", got)
			}

			twice := signedPDF(t, e.signPDF(key, strings.Replace(signBody(inline(out)), "evt-1", "evt-2", 1)))
			res = e.verifyPDF(twice)
			if !res.Valid || len(res.Signers) != 2 || !res.Signers[0].Valid || res.Signers[0].CoversWholeDocument ||
				!res.Signers[1].CoversWholeDocument || res.Signers[0].EventID != "evt-1" || res.Signers[1].EventID != "evt-2" ||
				len(res.Signers[0].AuditTrail) != 2 || len(res.Signers[1].AuditTrail) != 2 {
				t.Errorf("signed twice: %+v", res)
			}
		})
	}
}

func TestVerifyJSONAndKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	out := signedPDF(t, e.signPDF(e.key("k@example.com"), signBody(inline(pdftest.OnePage("x")))))
	r := e.do("POST", "/v1/verify", strings.NewReader(`{"document":{"base64":"`+base64.StdEncoding.EncodeToString(out)+`"}}`), nil)
	var res signing.VerifyResult
	r.json(t, &res)
	if r.status != 200 || !res.Valid {
		t.Errorf("verify JSON = %d %s", r.status, r.body)
	}
	e.do("POST", "/v1/verify", strings.NewReader(`{"document":{}}`), nil).errorBody(t, 400, "VALIDATION_ERROR")
	e.do("POST", "/v1/verify", strings.NewReader(`{"document":{"base64":"`+base64.StdEncoding.EncodeToString([]byte("not a pdf"))+`"}}`), nil).errorBody(t, 422, "UNPROCESSABLE_DOCUMENT")
	unsigned := e.verifyPDF(pdftest.OnePage("unsigned"))
	if unsigned.Valid || unsigned.Reason == "" {
		t.Errorf("an unsigned PDF: %+v", unsigned)
	}

	var k struct {
		PEM, FingerprintSHA256, IssuerDN                              string
		Version, Algorithm, PublicKey, Fingerprint, ValidFrom, Issuer string
	}
	e.get("/v1/verify/key").json(t, &k)
	block, _ := pem.Decode([]byte(k.PEM))
	if block == nil {
		t.Fatalf("no PEM in %+v", k)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	sum := sha256.Sum256(block.Bytes)
	if err != nil || k.FingerprintSHA256 != hex.EncodeToString(sum[:]) ||
		!strings.Contains(k.IssuerDN, "quire signing CA") || res.Signers[0].SerialNumber == "" || cert.SerialNumber.String() == "" {
		t.Errorf("key = %+v (%v)", k, err)
	}
	// The hosted API's fields.
	pub, _ := pem.Decode([]byte(k.PublicKey))
	wantPub, _ := x509.MarshalPKIXPublicKey(cert.PublicKey)
	if pub == nil || pub.Type != "PUBLIC KEY" || !bytes.Equal(pub.Bytes, wantPub) {
		t.Errorf("publicKey %q is not the certificate's", k.PublicKey)
	}
	if want := strings.ToUpper(hex.EncodeToString(sum[:1])) + ":" + strings.ToUpper(hex.EncodeToString(sum[1:2])) + ":"; !strings.HasPrefix(k.Fingerprint, want) || len(k.Fingerprint) != 32*3-1 {
		t.Errorf("fingerprint %q, want upper-case hex pairs starting %s", k.Fingerprint, want)
	}
	if k.Algorithm != "ECDSA-SHA256" || k.Issuer != "quire" || k.ValidFrom != cert.NotBefore.UTC().Format(time.DateOnly) || k.Version == "" {
		t.Errorf("key = %+v", k)
	}
}

func TestSignRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	key := e.key("r@example.com")
	b := e.signPDF(key, strings.Replace(signBody(inline(pdftest.OnePage("x"))), `"certificate":{"enabled":false}`, `"certificate":{"enabel":false}`, 1)).errorBody(t, 400, "VALIDATION_ERROR")
	if len(b.Details) != 1 || b.Details[0].Field != "certificate.enabel" || !strings.Contains(b.Details[0].Issue, "did you mean enabled?") {
		t.Errorf("near miss: %+v", b.Details)
	}
	e.signPDF(key, signBody(inline([]byte("just some text, neither PDF nor DOCX")))).errorBody(t, 400, "INVALID_FILE_FORMAT")
	t.Run("encrypted", func(t *testing.T) {
		enc, err := os.ReadFile("../../../shared/corpus/pdf/qpdf__encrypted-40-bit-R3.pdf")
		if err != nil {
			t.Skipf("the shared corpus is absent (../shared/corpus, beside the repository): %v", err)
		}
		b := e.signPDF(key, signBody(inline(enc))).errorBody(t, 422, "UNPROCESSABLE_DOCUMENT")
		if !strings.Contains(b.Message, "encrypted") {
			t.Errorf("encrypted: %q", b.Message)
		}
	})
	big := make([]byte, 3<<20)
	e.signPDF(key, signBody(inline(big))).errorBody(t, 413, "PAYLOAD_TOO_LARGE")

	// SSRF: a document URL on loopback is refused before any connection.
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++; w.Write(pdftest.OnePage("remote")) }))
	defer srv.Close()
	b = e.signPDF(key, signBody(`{"url":"`+srv.URL+`/doc.pdf"}`)).errorBody(t, 422, "UNPROCESSABLE_DOCUMENT")
	if hits != 0 || b.Details[0].Field != "document.url" {
		t.Errorf("loopback URL: %d hits, %+v", hits, b)
	}
	e.signPDF(key, signBody(`{"url":"file:///etc/passwd"}`)).errorBody(t, 400, "VALIDATION_ERROR")
}

// TestSignAsTheHostedAPIsClientsDo: certificate.enable (the e-sign
// demo's spelling), a 255-character name and audit timestamps with an
// offset are accepted; the timestamps are recorded in UTC.
func TestSignAsTheHostedAPIsClientsDo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	key := e.key("hosted@example.com")
	name := strings.Repeat("N", 255)
	body := `{"document":` + inline(pdftest.OnePage("Hosted")) + `,"signer":{"email":"h@example.com","name":"` + name + `"},
		"auditTrail":[{"type":"submit","timestamp":"2026-11-22T11:00:00+01:00"}],"eventId":"evt-hosted","certificate":{"enable":true}}`
	out := signedPDF(t, e.signPDF(key, body))
	text := strings.Join(strings.Fields(tool(t, "poppler-utils", "pdftotext", pdftest.WriteTemp(t, out), "-")), " ")
	if !strings.Contains(text, "2026-11-22 10:00:00 UTC") {
		t.Errorf("no certificate page with the submit time in UTC:\n%s", text)
	}
	off := signedPDF(t, e.signPDF(key, strings.Replace(strings.Replace(body, `"enable":true`, `"enable":false`, 1), "evt-hosted", "evt-hosted-2", 1)))
	if pages := tool(t, "poppler-utils", "pdfinfo", pdftest.WriteTemp(t, off)); !strings.Contains(strings.Join(strings.Fields(pages), " "), "Pages: 1 ") {
		t.Errorf("certificate.enable false still appends the certificate page:\n%s", pages)
	}
	e.signPDF(key, strings.Replace(body, name, name+"N", 1)).errorBody(t, 400, "VALIDATION_ERROR")
}

func TestSignFromURLWhenPrivateAllowed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withPrivateFetch())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(pdftest.OnePage("remote")) }))
	defer srv.Close()
	out := signedPDF(t, e.signPDF(e.key("u@example.com"), signBody(`{"url":"`+srv.URL+`/doc.pdf"}`)))
	if res := e.verifyPDF(out); !res.Valid {
		t.Errorf("signed from URL: %+v", res)
	}
	signed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(out) }))
	defer signed.Close()
	r := e.do("POST", "/v1/verify", strings.NewReader(`{"document":{"url":"`+signed.URL+`/signed.pdf"}}`), map[string]string{"Content-Type": "application/json"})
	var res signing.VerifyResult
	if r.json(t, &res); r.status != 200 || !res.Valid {
		t.Errorf("verify by URL: %d %s", r.status, r.body)
	}
	b := e.do("POST", "/v1/verify", strings.NewReader(`{"document":{"url":"file:///etc/passwd"}}`), nil).errorBody(t, 400, "VALIDATION_ERROR")
	if b.Details[0].Field != "document.url" {
		t.Errorf("verify of a file: URL: %+v", b)
	}
}

func TestSignWithCertificatePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	key := e.key("cert@example.com")
	body := `{"document":` + inline(pdftest.OnePage("Lease")) + `,
		"signer":{"email":"zoe@example.com","name":"Zoë Ångström 王小明","ip":"198.51.100.4","userAgent":"Mozilla/5.0 (X11)"},
		"auditTrail":[{"type":"ready","timestamp":"2026-11-22T09:59:00Z"},
			{"type":"field_change","timestamp":"2026-11-22T09:59:30Z","data":{"fieldId":"agree","value":"yes"}},
			{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}],
		"eventId":"evt-cert","metadata":{"contract":"C-77"}}`
	out := signedPDF(t, e.signPDF(key, body))
	path := pdftest.WriteTemp(t, out)
	if got := tool(t, "poppler-utils", "pdfsig", path); !strings.Contains(got, "Signature is Valid.") || !strings.Contains(got, "Total document signed") {
		t.Errorf("pdfsig:\n%s", got)
	}
	if got := tool(t, "qpdf", "qpdf", "--check", path); !strings.Contains(got, "No syntax or stream encoding errors") {
		t.Errorf("qpdf --check:\n%s", got)
	}
	if info := strings.Join(strings.Fields(tool(t, "poppler-utils", "pdfinfo", path)), " "); !strings.Contains(info, "Pages: 2 ") {
		t.Errorf("want the document page and one certificate page:\n%s", info)
	}
	text := strings.Join(strings.Fields(tool(t, "poppler-utils", "pdftotext", "-f", "2", path, "-")), " ")
	for _, want := range []string{"Zoë Ångström 王小明", "zoe@example.com", "198.51.100.4", "evt-cert", "ready", "field_change", "submit",
		"agree", "C-77", "2026-11-22 10:00:00 UTC", "Certificate page 1 of 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("the certificate page lacks %q:\n%s", want, text)
		}
	}
	sum := sha256.Sum256(pdftest.OnePage("Lease"))
	if !strings.Contains(strings.ReplaceAll(text, " ", ""), hex.EncodeToString(sum[:])) {
		t.Errorf("the certificate page lacks the document's SHA-256")
	}
	if res := e.verifyPDF(out); !res.Valid || res.Signers[0].EventID != "evt-cert" {
		t.Errorf("verify: %+v", res)
	}
}

// TestSignTellsTheCaller: the answer names the event (the request's, or
// the UUID generated for it) and the SHA-256 of the signed PDF, in the
// headers X-Quire-Event-Id and X-Quire-Document-SHA256 and in the JSON
// fields eventId and sha256, which the hosted schema allows.
func TestSignTellsTheCaller(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	key := e.key("ann@example.com")
	uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	for _, tc := range []struct{ name, body, want string }{
		{"given", signBody(inline(pdftest.OnePage("x"))), "evt-1"},
		{"generated", strings.Replace(signBody(inline(pdftest.OnePage("x"))), `"eventId":"evt-1",`, "", 1), ""},
	} {
		r := e.signPDF(key, tc.body)
		pdf := signedPDF(t, r)
		var res struct{ EventID, SHA256 string }
		r.json(t, &res)
		sum := sha256.Sum256(pdf)
		id, digest := r.header.Get("X-Quire-Event-Id"), r.header.Get("X-Quire-Document-SHA256")
		if digest != hex.EncodeToString(sum[:]) || res.SHA256 != digest {
			t.Errorf("%s: SHA-256 header %q, field %q; the PDF's is %x", tc.name, digest, res.SHA256, sum)
		}
		if (tc.want != "" && id != tc.want) || (tc.want == "" && !uuidRE.MatchString(id)) || res.EventID != id {
			t.Errorf("%s: event id header %q, field %q", tc.name, id, res.EventID)
		}
		if v := e.verifyPDF(pdf); len(v.Signers) != 1 || v.Signers[0].EventID != id {
			t.Errorf("%s: the event recorded is not the one answered: %+v", tc.name, v)
		}
	}
}

// TestSignLevelAsked: the query's level and strict reach the signing,
// and Quire-Signature-Level names the level reached; without a
// time-stamp authority, B-T is B-B, or 422 when strict.
func TestSignLevelAsked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	key := e.key("ann@example.com")
	post := func(query string) response {
		return e.do("POST", "/v1/sign"+query, strings.NewReader(signBody(inline(pdftest.OnePage("x")))),
			map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
	}
	for _, q := range []string{"", "?level=B-B", "?level=B-T"} {
		r := post(q)
		signedPDF(t, r)
		if got := r.header.Get("Quire-Signature-Level"); got != "B-B" {
			t.Errorf("%q: Quire-Signature-Level %q, want B-B (no time-stamp authority)", q, got)
		}
	}
	if b := post("?level=B-T&strict=true").errorBody(t, 422, "UNPROCESSABLE_DOCUMENT"); !strings.Contains(b.Message, "time-stamp authority") {
		t.Errorf("strict B-T without an authority: %q", b.Message)
	}
	for q, field := range map[string]string{"?level=B-Q": "level", "?strict=yes": "strict"} {
		if b := post(q).errorBody(t, 400, "VALIDATION_ERROR"); len(b.Details) != 1 || b.Details[0].Field != field {
			t.Errorf("%s: %+v", q, b.Details)
		}
	}
}

// TestCAPublishesCRL: quire's own CA serves its CRL and certificate,
// without an API key, at the URLs named by its id; other ids are unknown.
func TestCAPublishesCRL(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	var k struct{ CAID, ChainPEM string }
	e.get("/v1/verify/key").json(t, &k)
	block, _ := pem.Decode([]byte(k.ChainPEM))
	if k.CAID == "" || block == nil {
		t.Fatalf("key: %+v", k)
	}
	ca, _ := x509.ParseCertificate(block.Bytes)
	r := e.get("/v1/ca/" + k.CAID + "/crl")
	crl, err := x509.ParseRevocationList(r.body)
	if r.status != 200 || r.header.Get("Content-Type") != "application/pkix-crl" || err != nil || crl.CheckSignatureFrom(ca) != nil ||
		crl.NextUpdate.Before(time.Now().Add(6*24*time.Hour)) {
		t.Fatalf("CRL: %d %s %v", r.status, r.header.Get("Content-Type"), err)
	}
	r = e.get("/v1/ca/" + k.CAID + "/certificate")
	if r.status != 200 || r.header.Get("Content-Type") != "application/pkix-cert" || !bytes.Equal(r.body, ca.Raw) {
		t.Fatalf("certificate: %d %s", r.status, r.header.Get("Content-Type"))
	}
	e.get("/v1/ca/0123456789abcdef/crl").errorBody(t, 404, "NOT_FOUND")
}

// TestSignCertifiedNoChanges: a document certified against any change
// (DocMDP P=1) is refused with 422 saying why.
func TestSignCertifiedNoChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited())
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := pdf.Open(context.Background(), pdftest.OnePage("certified"), pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	certified, _, err := pdfsign.Sign(context.Background(), doc, id, pdfsign.Options{DocMDP: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := e.signPDF(e.key("c@example.com"), signBody(inline(certified))).errorBody(t, 422, "UNPROCESSABLE_DOCUMENT")
	if !strings.Contains(b.Message, "DocMDP") || !strings.Contains(b.Message, "P=1") {
		t.Errorf("message %q does not say why", b.Message)
	}
}
