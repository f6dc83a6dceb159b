package pdf

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

func TestSHA256(t *testing.T) {
	t.Parallel()
	in := pdftest.OnePage("hash")
	d, err := Open(t.Context(), in, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	longer := append(bytes.Clone(in), "appended"...)
	changed := bytes.Clone(longer)
	changed[10] ^= 1
	for i, b := range [][]byte{in, longer, longer, changed, in[:10], nil} {
		if got, want := d.SHA256(b).Sum(nil), sha256.Sum256(b); !bytes.Equal(got, want[:]) {
			t.Errorf("case %d: %x, want %x", i, got, want)
		}
	}
}
