package pdfsign

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
)

// tampered is a signer of quire's identity whose CMS, once made, is
// changed by tamper (given the signed attributes in DER's order).
func tampered(id *Identity, name string, tamper func(t testing.TB, cms []byte, sorted [][]byte) []byte) foreignSigner {
	signer := goSigner(name, id.Key, id.Certificate, func(a [][]byte) [][]byte { return a })
	cms := signer.cms
	signer.cms = func(t testing.TB, content []byte) []byte {
		sum := sha256.Sum256(content)
		sorted := signedAttributes(id.Certificate, cmsContent{contentType: oidData, digest: sum[:]})
		slices.SortFunc(sorted, bytes.Compare)
		return tamper(t, cms(t, content), sorted)
	}
	return signer
}

// TestSignedAttributesOrderAndSignature: a CMS whose signed attributes are
// sent in an order other than DER's, the signature made over DER's order
// (as some signers do), verifies; one whose signature value is changed
// does not, whatever the order.
func TestSignedAttributesOrderAndSignature(t *testing.T) {
	t.Parallel()
	id := testIdentity(t)
	unsorted := func(t testing.TB, cms []byte, sorted [][]byte) []byte {
		old := bytes.Join(sorted, nil)
		if !bytes.Contains(cms, old) {
			t.Fatal("the signed attributes are not in the CMS in DER's order")
		}
		reversed := slices.Clone(sorted)
		slices.Reverse(reversed)
		return bytes.Replace(cms, old, bytes.Join(reversed, nil), 1)
	}
	// With no unsigned attributes, the signature value ends the CMS.
	corrupt := func(t testing.TB, cms []byte, _ [][]byte) []byte {
		cms[len(cms)-1] ^= 0xff
		return cms
	}
	for _, c := range []struct {
		fs    foreignSigner
		valid bool
	}{
		{tampered(id, "attributes sent out of order", unsorted), true},
		{tampered(id, "signature changed", corrupt), false},
		{tampered(id, "signature changed, attributes out of order", func(t testing.TB, cms []byte, sorted [][]byte) []byte {
			return corrupt(t, unsorted(t, cms, sorted), nil)
		}), false},
	} {
		res, err := Verify(signForeign(t, contract(docSpec{}), c.fs, 0), id.Roots(), pdf.Limits{})
		if err != nil || len(res.Signers) != 1 {
			t.Fatalf("%s: %v %+v", c.fs.name, err, res)
		}
		sr := res.Signers[0]
		if res.Valid != c.valid || sr.SignatureValid != c.valid || !sr.DigestValid || (sr.Indication == TotalFailed) == c.valid {
			t.Errorf("%s: valid %v, signature valid %v, digest valid %v, %s: %s", c.fs.name, res.Valid, sr.SignatureValid, sr.DigestValid, sr.Indication, sr.Reason)
		}
	}
}
