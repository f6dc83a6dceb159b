package pdfsign

import (
	"context"
	"crypto/sha256"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// Signing cost beside hashing the same bytes: the gap is the parsing,
// writing and ECDSA work of Sign (its self-check verification included).
func benchmarkSign(b *testing.B, pad int) {
	in := pdftest.Generated(1, false, pad)
	id := testIdentity(b)
	b.Run("Sign", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			if _, _, err := signBytes(context.Background(), in, id, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SHA256", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			sha256.Sum256(in)
		}
	})
}

func BenchmarkSign1Page(b *testing.B) { benchmarkSign(b, 0) }
func BenchmarkSign5MB(b *testing.B)   { benchmarkSign(b, 5<<20) }
