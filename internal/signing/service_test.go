package signing

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/pdfsign/pdftest"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func newService(t *testing.T, db *store.DB) *Service {
	t.Helper()
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()}) // each its own CA
	if err != nil {
		t.Fatal(err)
	}
	return New(id, db, nil, Options{MaxDocumentBytes: 1 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// TestInstancesTrustEachOther signs on one instance and verifies on
// another that shares the database but generated its own identity.
func TestInstancesTrustEachOther(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a, b := newService(t, db), newService(t, db)
		req := Request{Document: Document{Bytes: pdftest.OnePage("shared")}, EventID: "evt-a",
			Signer:     Signer{Name: "Ann", Email: "ann@example.com"},
			AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Now().UTC()}}}
		pdf, err := a.Sign(ctx, req, "key_a")
		if err != nil {
			t.Fatal(err)
		}
		if res, err := b.Verify(ctx, pdf); err != nil || res.Valid {
			t.Fatalf("before a published its root, b trusts its signature: %+v %v", res, err)
		}
		if err := a.Publish(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := b.Verify(ctx, pdf)
		if err != nil || !res.Valid || !res.Signers[0].Trusted || res.Signers[0].EventID != "evt-a" {
			t.Errorf("b verifies a's signature: %+v %v", res, err)
		}
	})
}

// TestVerifyHint: the certificate page names the verification page by its
// absolute URL when the service knows it, and says how to find it when not.
func TestVerifyHint(t *testing.T) {
	s := newService(t, storetest.Open(t, storetest.URL(t, "sqlite")))
	if h := s.certificateData(Request{}, "", time.Now()).VerifyHint; !strings.Contains(h, "open /verify on the server that signed it") {
		t.Errorf("hint without a public URL: %q", h)
	}
	s.opt.PublicURL = "https://docs.example.com/"
	if h := s.certificateData(Request{}, "", time.Now()).VerifyHint; !strings.Contains(h, "open https://docs.example.com/verify and drop the file") {
		t.Errorf("hint with a public URL: %q", h)
	}
}
