package signing

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdf/pdftest/pdfcheck"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestTypedSignatureSigned signs for signers who drew nothing: the
// certificate page of the signed file shows each name, typed, in the
// signature box and in the Signer section, and pdftotext reads it exactly
// as written (the Devanagari name's vowel signs and reph included); pdfsig
// and every validator accept the file.
func TestTypedSignatureSigned(t *testing.T) {
	svc := newService(t, storetest.Open(t, storetest.URL(t, "sqlite")))
	for _, name := range []string{"Ann Example", "राम प्रसाद शर्मा"} {
		req := Request{Document: Document{Bytes: pdftest.OnePage("Agreement")}, Certificate: true,
			Signer:     Signer{Name: name, Email: "signer@example.com"},
			AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}}}
		res, err := svc.Sign(context.Background(), req, "key")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pdfcheck.Valid(t, name, res.PDF)
		path := filepath.Join(t.TempDir(), "signed.pdf")
		if err := os.WriteFile(path, res.PDF, 0o600); err != nil {
			t.Fatal(err)
		}
		if out := command(t, "pdfsig", path); !strings.Contains(out, "Signature is Valid.") {
			t.Errorf("%s: pdfsig:\n%s", name, out)
		}
		// Page 2 is the certificate page; pdftotext puts each value on a
		// line of its own.
		n := 0
		for _, l := range strings.Split(command(t, "pdftotext", "-enc", "UTF-8", "-f", "2", "-l", "2", path, "-"), "\n") {
			if strings.TrimSpace(l) == name {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%s: pdftotext gives the name as a line %d times, want 2 (signature box and Signer section)", name, n)
		}
	}
}
