package signing

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
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

// TestSignValidates: whoever calls Sign, an invalid request is refused
// before anything is signed or recorded.
func TestSignValidates(t *testing.T) {
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
