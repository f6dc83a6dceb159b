package signing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// certificates renders the certificate pages of every test's signatures.
var certificates = certpage.NewLazy(certpage.Options{})

func newService(t *testing.T, db *store.DB, fetchOpt ...fetch.Options) *Service {
	t.Helper()
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()}) // each its own CA
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Certificates: certificates, MaxDocumentBytes: 1 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var fo fetch.Options
	if len(fetchOpt) > 0 {
		fo = fetchOpt[0]
	}
	fo.MaxBytes = opt.MaxDocumentBytes
	return New(id, db, nil, fetch.New(fo), opt)
}

// TestSignValidates: whoever calls Sign, an invalid request is refused
// before anything is signed or recorded.
func TestSignValidates(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.URL(t, "sqlite"))
	req := Request{Document: Document{Bytes: pdftest.OnePage("x")}, Signer: Signer{Name: strings.Repeat("A", 500), Email: "not-an-email"},
		AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Now()}}, EventID: strings.Repeat("x", 400)}
	_, err := newService(t, db).Sign(context.Background(), req, "key")
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Code != quire.CodeValidation || len(qe.Details) != 3 {
		t.Errorf("Sign(invalid) = %v, want a VALIDATION_ERROR naming 3 fields", err)
	}
}

// TestInstancesTrustEachOther signs on one instance and verifies on
// another that shares the database but generated its own identity.
func TestInstancesTrustEachOther(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a, b := newService(t, db), newService(t, db)
		req := Request{Document: Document{Bytes: pdftest.OnePage("shared")}, EventID: "evt-a",
			Signer:     Signer{Name: "Ann", Email: "ann@example.com"},
			AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Now().UTC()}}}
		signed, err := a.Sign(ctx, req, "key_a")
		if err != nil {
			t.Fatal(err)
		}
		pdf := signed.PDF
		if res, err := b.Verify(ctx, Document{Bytes: pdf}); err != nil || res.Valid {
			t.Fatalf("before a published its root, b trusts its signature: %+v %v", res, err)
		}
		if err := a.Publish(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := b.Verify(ctx, Document{Bytes: pdf})
		if err != nil || !res.Valid || !res.Signers[0].Trusted || res.Signers[0].EventID != "evt-a" {
			t.Errorf("b verifies a's signature: %+v %v", res, err)
		}
	})
}

// TestVerifyNamesThePrimarySigner verifies a document signed twice,
// downloaded by URL: the primary signer is the newest signature's, with the
// e-mail recorded for its event, and the document's metadata is its own.
func TestVerifyNamesThePrimarySigner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t, storetest.Open(t, storetest.URL(t, "sqlite")), fetch.Options{AllowPrivate: true})
	pdf := pdftest.OnePage("twice")
	for _, who := range []Signer{{Name: "Ann", Email: "ann@example.com"}, {Name: "Bob", Email: "bob@example.com"}} {
		req := Request{Document: Document{Bytes: pdf}, EventID: "evt-" + who.Name, Signer: who,
			AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Now().UTC()}}}
		res, err := svc.Sign(ctx, req, "key")
		if err != nil {
			t.Fatal(err)
		}
		pdf = res.PDF
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(pdf) }))
	defer srv.Close()

	res, err := svc.Verify(ctx, Document{URL: srv.URL + "/signed.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid || len(res.Signers) != 2 || res.Signer == nil {
		t.Fatalf("verify = %+v", res)
	}
	if s := res.Signer; s.Name != "Bob" || s.Email != "bob@example.com" || s.EventID != "evt-Bob" {
		t.Errorf("primary signer = %+v, want Bob's signature", s)
	}
	if s := res.Signers[0]; s.Email != "ann@example.com" {
		t.Errorf("first signer's e-mail = %q", s.Email)
	}
	sum := sha256.Sum256(pdf)
	want := DocumentInfo{SHA256: hex.EncodeToString(sum[:]), Size: len(pdf), Pages: 1, ContentType: "application/pdf", Signatures: 2}
	if res.Document != want {
		t.Errorf("document = %+v, want %+v", res.Document, want)
	}

	unsigned, err := svc.Verify(ctx, Document{Bytes: pdftest.OnePage("none")})
	if err != nil || unsigned.Valid || unsigned.Signer != nil || unsigned.Document.Signatures != 0 {
		t.Errorf("an unsigned document: %+v %v", unsigned, err)
	}
	_, err = newService(t, storetest.Open(t, storetest.URL(t, "sqlite"))).Verify(ctx, Document{URL: srv.URL})
	if qe, ok := err.(*quire.Error); !ok || qe.Code != quire.CodeUnprocessable || qe.Details[0].Field != "document.url" {
		t.Errorf("a loopback URL without the opt-in: %v", err)
	}
}

// TestVerifyRefusesTwoDocuments: a document must be inline or a URL, not
// both; the verify route's decoding leaves that rule to Verify.
func TestVerifyRefusesTwoDocuments(t *testing.T) {
	t.Parallel()
	svc := newService(t, storetest.Open(t, storetest.URL(t, "sqlite")))
	for _, d := range []Document{{Bytes: pdftest.OnePage("x"), URL: "https://example.com/a.pdf"}, {}} {
		_, err := svc.Verify(context.Background(), d)
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.Message != "The verify request is not valid." || len(qe.Details) != 1 || qe.Details[0].Field != "document" {
			t.Errorf("Verify(%d bytes and %q) = %v, want the verify request's own message about document", len(d.Bytes), d.URL, err)
		}
	}
}

// TestVerifyHint: the certificate page names the verification page by its
// absolute URL when the service knows it, and says how to find it when not;
// it names the operator (QUIRE_SIGNING_ORG).
func TestVerifyHint(t *testing.T) {
	t.Parallel()
	s := newService(t, storetest.Open(t, storetest.URL(t, "sqlite")))
	if h := s.certificateData(Request{}, "", time.Now()).VerifyHint; !strings.Contains(h, "open /verify on the server that signed it") {
		t.Errorf("hint without a public URL: %q", h)
	}
	s.opt.PublicURL = "https://docs.example.com/"
	s.opt.Organization = "Acme Légal GmbH"
	if o := s.certificateData(Request{}, "", time.Now()).Organization; o != "Acme Légal GmbH" {
		t.Errorf("organisation on the page: %q", o)
	}
	if h := s.certificateData(Request{}, "", time.Now()).VerifyHint; !strings.Contains(h, "open https://docs.example.com/verify and drop the file") {
		t.Errorf("hint with a public URL: %q", h)
	}
}

// TestSigningRecordsHashes: the record names the input and the output by
// their SHA-256, and the caller is told the output's, whether the output extends the input in its own memory
// (room to spare after it), in a copy, or is a repaired rewrite of it.
func TestSigningRecordsHashes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, storetest.URL(t, "sqlite"))
	svc := newService(t, db)
	onePage := pdftest.OnePage("hashes")
	roomy := append(make([]byte, 0, len(onePage)+1<<20), onePage...)
	damaged := pdftest.Objects("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>")
	for i, in := range [][]byte{onePage, roomy, damaged} {
		for _, cert := range []bool{false, true} {
			req := Request{Document: Document{Bytes: in}, EventID: fmt.Sprintf("evt-%d-%v", i, cert), Certificate: cert,
				Signer: Signer{Name: "Ann", Email: "ann@example.com"}, AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Now().UTC()}}}
			signed, err := svc.Sign(ctx, req, "key")
			if err != nil {
				t.Fatal(err)
			}
			out := signed.PDF
			if signed.SHA256 != sha(out) {
				t.Errorf("input %d, certificate %v: the caller is told %s, want %s", i, cert, signed.SHA256, sha(out))
			}
			res, err := svc.Verify(ctx, Document{Bytes: out})
			if err != nil || len(res.Signers) != 1 {
				t.Fatalf("verify: %+v %v", res, err)
			}
			rec, err := db.SigningByDigest(ctx, res.Signers[0].Digest)
			if err != nil {
				t.Fatal(err)
			}
			if rec.InputSHA256 != sha(in) || rec.OutputSHA256 != sha(out) {
				t.Errorf("input %d, certificate %v: recorded %s, %s; want %s, %s", i, cert, rec.InputSHA256, rec.OutputSHA256, sha(in), sha(out))
			}
		}
	}
}
