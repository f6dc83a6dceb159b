package client_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/client"
	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// These tests drive a real quire server (see startQuire) through the
// client only.

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// asError returns the *client.Error in err, failing the test when there is
// none or when it does not have the status and code wanted.
func asError(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *client.Error", err, err)
	}
	if e.Status != status || e.Code != code || e.Message == "" || e.RequestID == "" {
		t.Fatalf("error %+v, want status %d, code %s, a message and a request id", e, status, code)
	}
	return e
}

// validSignRequest passes every rule of the contract.
func validSignRequest() client.SignRequest {
	return client.SignRequest{
		Document: client.DocumentFromBytes(pdftest.OnePage("Contract C-7")),
		Signer:   client.Signer{Email: "ann@example.com", Name: "Ann Example", IP: "203.0.113.9"},
		AuditTrail: []client.AuditEvent{
			{Type: client.AuditReady, Timestamp: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)},
			{Type: client.AuditSubmit, Timestamp: time.Date(2026, 11, 22, 9, 1, 0, 0, time.UTC), Data: map[string]any{"button": "Sign"}},
		},
		EventID:  "evt_client_test",
		Metadata: map[string]any{"contract": "C-7"},
	}
}

func TestKeyIssuanceAndAuthentication(t *testing.T) {
	s := startQuire(t, nil)
	ctx := ctxFor(t)
	anon := s.client()

	if err := anon.Register(ctx, "ann@example.com"); err != nil {
		t.Fatalf("Register: %v", err)
	}
	key, err := anon.Verify(ctx, "ann@example.com", s.code(t, "ann@example.com"))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !strings.HasPrefix(key, "sd_") || len(key) != len("sd_")+43+6 {
		t.Fatalf("API key %q is not sd_ + 43 + 6 characters", key)
	}

	// The key gets past authentication: the server signs.
	authed := s.client(client.WithAPIKey(key))
	if _, err := authed.Sign(ctx, validSignRequest()); err != nil {
		t.Fatalf("Sign with the key: %v", err)
	}
	// Conversion is behind the same check: whatever it answers with the
	// key (NOT_FOUND while the route is not built), it is not a 401.
	_, err = authed.Convert(ctx, strings.NewReader("not really a docx"), "a.docx", "docx")
	if e := (*client.Error)(nil); !errors.As(err, &e) || e.Code == client.CodeAuthentication || e.RequestID == "" {
		t.Errorf("Convert with the key: %v", err)
	}

	_, err = anon.Sign(ctx, validSignRequest())
	e := asError(t, err, http.StatusUnauthorized, client.CodeAuthentication)
	if e.Method != "POST" || e.Path != "/v1/sign" {
		t.Errorf("error names %s %s, want POST /v1/sign", e.Method, e.Path)
	}
	if !strings.Contains(err.Error(), e.RequestID) || !strings.Contains(err.Error(), "AUTHENTICATION_ERROR") {
		t.Errorf("error text %q lacks the code or the request id", err)
	}
	_, err = anon.Convert(ctx, strings.NewReader("not really a docx"), "a.docx", "docx")
	asError(t, err, http.StatusUnauthorized, client.CodeAuthentication)

	wrong := key[:len(key)-1] + "A" // the checksum no longer matches
	if strings.HasSuffix(key, "A") {
		wrong = key[:len(key)-1] + "B"
	}
	bad := s.client(client.WithAPIKey(wrong))
	_, err = bad.Sign(ctx, validSignRequest())
	asError(t, err, http.StatusUnauthorized, client.CodeAuthentication)
	if strings.Contains(err.Error(), wrong) || strings.Contains(fmt.Sprintf("%v %+v %#v", bad, bad, bad), wrong) {
		t.Error("the key shows in an error or in the printed client")
	}
}

func TestNotFoundCarriesTheRequestID(t *testing.T) {
	s := startQuire(t, nil)
	// A base URL with a path the server does not have: every call is 404.
	_, err := client.New(s.URL + "/elsewhere").Health(ctxFor(t))
	e := asError(t, err, http.StatusNotFound, client.CodeNotFound)
	if e.Path != "/v1/health" || !strings.Contains(e.Message, "/elsewhere/v1/health") {
		t.Errorf("error %+v", e)
	}
}

func TestSignVerifyAndSigningCertificate(t *testing.T) {
	s := startQuire(t, nil)
	ctx := ctxFor(t)
	c := s.keyed(t, ctx, "ann@example.com")

	req := validSignRequest()
	res, err := c.Sign(ctx, req)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	signed, err := res.PDF()
	if err != nil || res.Document.ContentType != "application/pdf" || !bytes.HasPrefix(signed, []byte("%PDF-")) {
		t.Fatalf("signed document: %v, content type %q, starts %q", err, res.Document.ContentType, signed[:min(8, len(signed))])
	}
	if sum := sha256.Sum256(signed); res.EventID != req.EventID || res.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sign answer names event %q and SHA-256 %q; want %q and %x", res.EventID, res.SHA256, req.EventID, sum)
	}

	v, err := c.VerifySignature(ctx, signed)
	if err != nil {
		t.Fatalf("VerifySignature: %v", err)
	}
	if !v.Valid || v.Reason != "" || len(v.Signers) != 1 {
		t.Fatalf("verification of the signed PDF: %+v", v)
	}
	if sg := v.Signers[0]; !sg.Valid || !sg.Trusted || !sg.CoversWholeDocument || sg.Name != "Ann Example" || sg.Subject == "" ||
		sg.EventID != req.EventID || sg.SignerEmail != req.Signer.Email || sg.SigningTime.IsZero() || sg.RecordedAt.IsZero() {
		t.Errorf("signer %+v", sg)
	}
	if sg := v.Signers[0]; !reflect.DeepEqual(sg.AuditTrail, req.AuditTrail) {
		t.Errorf("recorded audit trail %+v, want the request's %+v", sg.AuditTrail, req.AuditTrail)
	}
	if sg := v.Signers[0]; sg.Email != req.Signer.Email {
		t.Errorf("signer e-mail %q, want the one recorded for the event, %q", sg.Email, req.Signer.Email)
	}
	if v.Signer == nil || v.Signer.EventID != req.EventID || v.Signer.Email != req.Signer.Email {
		t.Errorf("primary signer %+v", v.Signer)
	}
	if sg := v.Signers[0]; sg.Indication == "" || sg.Level == nil || sg.Modifications.Level != "none" || !sg.Modifications.Permitted || sg.Revocation.Where == "" {
		t.Errorf("examiner's fields of a fresh signature: %+v", sg)
	}
	if v.Document.SHA256 == "" || v.Document.Size != len(signed) || v.Document.Pages < 2 || v.Document.Signatures != 1 {
		t.Errorf("document metadata %+v", v.Document)
	}

	// One changed byte inside the signed range breaks the signature.
	tampered := bytes.Replace(signed, []byte("Contract C-7"), []byte("Contract C-8"), 1)
	if bytes.Equal(tampered, signed) {
		t.Fatal("the text to change is not in the signed PDF")
	}
	v, err = c.VerifySignature(ctx, tampered)
	if err != nil {
		t.Fatalf("VerifySignature of a changed PDF: %v", err)
	}
	if v.Valid || v.Reason == "" || len(v.Signers) != 1 || v.Signers[0].Valid || v.Signers[0].Reason == "" ||
		v.Signers[0].Indication != "TOTAL_FAILED" || v.Signers[0].SubIndication == nil || *v.Signers[0].SubIndication != "HASH_FAILURE" {
		t.Errorf("verification of a changed PDF: %+v", v)
	}

	_, err = c.VerifySignature(ctx, []byte("not a PDF at all"))
	if code := client.ErrorCode(err); code != client.CodeUnprocessable && code != client.CodeInvalidFormat {
		t.Errorf("VerifySignature of text: %v", err)
	}

	sc, err := c.SigningCertificate(ctx)
	if err != nil {
		t.Fatalf("SigningCertificate: %v", err)
	}
	cert, err := sc.Certificate()
	if err != nil {
		t.Fatalf("Certificate(): %v", err)
	}
	now := time.Now()
	if sc.Subject == "" || sc.Issuer != "quire" || sc.IssuerDN == "" || !sc.NotBefore.Before(now) || !now.Before(sc.NotAfter) ||
		!cert.NotAfter.Equal(sc.NotAfter) || cert.Subject.String() != sc.Subject ||
		sc.ValidTo != cert.NotAfter.UTC().Format(time.DateOnly) || !strings.HasPrefix(sc.PublicKey, "-----BEGIN PUBLIC KEY-----") {
		t.Errorf("signing certificate %+v", sc)
	}
	if sg := v.Signers[0]; sg.Subject != sc.Subject {
		t.Errorf("the signature's certificate %q is not the signing certificate %q", sg.Subject, sc.Subject)
	}

	// The contract's rules are the server's: the client sends what it is given.
	noSubmit := validSignRequest()
	noSubmit.AuditTrail = noSubmit.AuditTrail[:1]
	_, err = c.Sign(ctx, noSubmit)
	if e := asError(t, err, http.StatusBadRequest, client.CodeValidation); len(e.Details) == 0 || !strings.HasPrefix(e.Details[0].Field, "auditTrail") {
		t.Errorf("details %+v, want auditTrail", e.Details)
	}
}

func TestValidationErrorsHaveDetails(t *testing.T) {
	s := startQuire(t, nil)
	ctx := ctxFor(t)
	c := s.client()

	err := c.Register(ctx, "not-an-address")
	e := asError(t, err, http.StatusBadRequest, client.CodeValidation)
	if len(e.Details) == 0 || e.Details[0].Field != "email" || e.Details[0].Issue == "" {
		t.Fatalf("details %+v, want the field email first", e.Details)
	}
	if client.ErrorCode(fmt.Errorf("wrapped: %w", err)) != client.CodeValidation {
		t.Error("ErrorCode does not see through wrapping")
	}

	if err := c.Register(ctx, "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	code := s.code(t, "bob@example.com")
	wrongCode := fmt.Sprintf("%06d", (atoi(code)+1)%1_000_000)
	_, err = c.Verify(ctx, "bob@example.com", wrongCode)
	asError(t, err, http.StatusBadRequest, client.CodeValidation)
	if strings.Contains(err.Error(), wrongCode) || strings.Contains(err.Error(), "bob@example.com") {
		t.Errorf("the error text %q holds the query (code or address)", err)
	}
	if _, err := c.Verify(ctx, "bob@example.com", code); err != nil {
		t.Errorf("the right code after a wrong one: %v", err)
	}
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

func TestRateLimitHasRetryAfter(t *testing.T) {
	s := startQuire(t, func(o *auth.Options) { o.RegisterPerEmail = ratelimit.Rate{N: 1, Per: time.Hour} })
	ctx := ctxFor(t)
	c := s.client()
	if err := c.Register(ctx, "carl@example.com"); err != nil {
		t.Fatal(err)
	}
	err := c.Register(ctx, "carl@example.com")
	e := asError(t, err, http.StatusTooManyRequests, client.CodeRateLimit)
	if e.RetryAfter <= 0 || e.RetryAfter > time.Hour {
		t.Errorf("RetryAfter %v, want within (0, 1h]", e.RetryAfter)
	}
}

func TestUsageReport(t *testing.T) {
	s := startQuire(t, nil)
	ctx := ctxFor(t)
	now := time.Now().UTC()

	// Intake is the editor library's side (package reporter); plain HTTP here.
	for _, doc := range []string{"HASH-0000000A", "HASH-0000000A", "HASH-0000000B"} {
		body := `{"libraryVersion":"1.0.0","events":[{"timestamp":"` + now.Format(time.RFC3339) + `","documentId":"` + doc + `"}]}`
		res, err := http.Post(s.URL+"/v1/collect", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("collect: %d", res.StatusCode)
		}
	}

	admin := s.client(client.WithAPIKey(adminToken))
	rep, err := admin.Usage(ctx, client.UsageQuery{GroupBy: client.GroupByDay})
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	if rep.GroupBy != client.GroupByDay || !rep.From.Before(rep.To) || now.Before(rep.From) || !now.Before(rep.To) {
		t.Errorf("report covers %s to %s by %s; want today inside, by day", rep.From, rep.To, rep.GroupBy)
	}
	l := rep.License("community-and-eval-agplv3")
	if l == nil || !l.Community || l.Registered || l.Organization != nil || len(l.Periods) != 1 {
		t.Fatalf("community usage %+v", l)
	}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if p := l.Periods[0]; !p.Start.Equal(today) || p.NewDocuments != 2 || p.ActiveDocuments != 2 || p.Opens != 3 {
		t.Errorf("period %+v, want start %s, 2 new, 2 active, 3 opens", p, today)
	}

	// A range without the activity, and a filter on a key without any.
	empty, err := admin.Usage(ctx, client.UsageQuery{From: today.AddDate(0, 0, -10), To: today.AddDate(0, 0, -9),
		LicenseKeys: []string{"community-and-eval-agplv3"}})
	if err != nil {
		t.Fatal(err)
	}
	if !empty.From.Equal(today.AddDate(0, 0, -10)) || empty.GroupBy != client.GroupByMonth || len(empty.Licenses) != 0 {
		t.Errorf("report of an empty range: %+v", empty)
	}

	_, err = s.client().Usage(ctx, client.UsageQuery{})
	asError(t, err, http.StatusUnauthorized, client.CodeAuthentication)
	_, err = admin.Usage(ctx, client.UsageQuery{GroupBy: "week"})
	if e := asError(t, err, http.StatusBadRequest, client.CodeValidation); len(e.Details) == 0 || e.Details[0].Field != "groupBy" {
		t.Errorf("details %+v, want groupBy", e.Details)
	}
}

func TestHealth(t *testing.T) {
	s := startQuire(t, nil)
	ctx := ctxFor(t)
	h, err := s.client().Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != "healthy" || h.Version != "test" || h.Checks["database"] != "ok" || time.Since(h.Timestamp).Abs() > time.Minute {
		t.Errorf("health %+v", h)
	}

	s.DB.Close() // the database no longer answers
	h, err = s.client().Health(ctx)
	e := asError(t, err, http.StatusServiceUnavailable, client.CodeUnavailable)
	if e.RetryAfter <= 0 {
		t.Error("no RetryAfter on 503")
	}
	if h == nil || h.Status != "unavailable" || h.Checks["database"] == "ok" {
		t.Errorf("health with the 503: %+v", h)
	}
}

// The conversion pool of tests that start one runs this binary as its
// workers.
func TestMain(m *testing.M) {
	apitest.RunWorkerIfAsked()
	os.Exit(m.Run())
}

// TestConvertAgainstQuire converts through the real service with one warm
// LibreOffice worker.
func TestConvertAgainstQuire(t *testing.T) {
	opt := apitest.Issuance()
	s := &quireServer{apitest.Start(t, storetest.Open(t, storetest.URL(t, "sqlite")), apitest.Config{Auth: opt, ConvertWorkers: 1})}
	ctx := ctxFor(t)
	key, _, err := s.Auth.CreateKey(ctx, "conv@example.com")
	if err != nil {
		t.Fatal(err)
	}
	c := s.client(client.WithAPIKey(key))
	pdf, err := c.Convert(ctx, strings.NewReader("# Minutes\n\n| item | owner |\n|---|---|\n| budget | Ann |\n"), "minutes.md", "md")
	if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("Convert: %v (%d bytes)", err, len(pdf))
	}
	_, err = c.Convert(ctx, strings.NewReader("not a word document"), "x.docx", "docx")
	asError(t, err, http.StatusBadRequest, "INVALID_FILE_FORMAT")
}

// keyed registers email and returns a client with the key it was given.
func (s *quireServer) keyed(t *testing.T, ctx context.Context, email string) *client.Client {
	t.Helper()
	if err := s.client().Register(ctx, email); err != nil {
		t.Fatal(err)
	}
	key, err := s.client().Verify(ctx, email, s.code(t, email))
	if err != nil {
		t.Fatal(err)
	}
	return s.client(client.WithAPIKey(key))
}
