package pdfsign

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

func TestSignMinimal(t *testing.T) {
	id := testIdentity(t)
	for _, xs := range []bool{false, true} {
		in := pdftest.Generated(2, xs, 0)
		out, _, err := signBytes(context.Background(), in, id, Options{Name: "Jane Doe", Reason: "Approved", Location: "Berlin"})
		if err != nil {
			t.Fatalf("xrefStream=%v: %v", xs, err)
		}
		if !bytes.HasPrefix(out, in) {
			t.Fatal("input is not a prefix of the output")
		}
		res, err := Verify(out, id.Roots(), pdf.Limits{})
		if err != nil || !res.Valid {
			t.Fatalf("verify: %v %+v", err, res)
		}
		tail := string(out[len(in):])
		if xs != strings.Contains(tail, "/Type /XRef") || xs == strings.Contains(tail, "\nxref\n") {
			t.Fatalf("xrefStream=%v: wrong kind of xref section in update:\n%s", xs, tail[len(tail)-400:])
		}
	}
}
