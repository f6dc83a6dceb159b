package pdfsign

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"

	// Register the hashes foreign signatures use with crypto.Hash.
	_ "crypto/sha1"
	_ "crypto/sha256"
	_ "crypto/sha3"
	_ "crypto/sha512"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// digestOIDs are the digest algorithms of CMS (RFC 5754, RFC 8702), and
// the signature algorithms some signers name as the digest algorithm.
var digestOIDs = map[string]crypto.Hash{
	oidSHA1.String():          crypto.SHA1,
	"2.16.840.1.101.3.4.2.4":  crypto.SHA224,
	oidSHA256.String():        crypto.SHA256,
	oidSHA384.String():        crypto.SHA384,
	oidSHA512.String():        crypto.SHA512,
	"2.16.840.1.101.3.4.2.8":  crypto.SHA3_256,
	"2.16.840.1.101.3.4.2.9":  crypto.SHA3_384,
	"2.16.840.1.101.3.4.2.10": crypto.SHA3_512,
	"1.2.840.113549.1.1.5":    crypto.SHA1,
	"1.2.840.113549.1.1.11":   crypto.SHA256,
	"1.2.840.113549.1.1.12":   crypto.SHA384,
	"1.2.840.113549.1.1.13":   crypto.SHA512,
}

// hashFor maps a digest algorithm OID to its hash.
func hashFor(oid asn1.ObjectIdentifier) (crypto.Hash, error) {
	if h, ok := digestOIDs[oid.String()]; ok {
		return h, nil
	}
	return 0, fmt.Errorf("unsupported digest algorithm %s", oid)
}

// weakHash reports a digest no longer fit for signatures (SHA-1: chosen-
// prefix collisions are practical), as the reference validators' policies
// say.
func weakHash(h crypto.Hash) bool { return h == crypto.SHA1 }

// Signature algorithms by key type (RFC 4055, 5758, 8419, 8702).
var (
	rsaPKCS1OIDs = oidSet("1.2.840.113549.1.1.1", "1.2.840.113549.1.1.5", "1.2.840.113549.1.1.14", "1.2.840.113549.1.1.11",
		"1.2.840.113549.1.1.12", "1.2.840.113549.1.1.13", "2.16.840.1.101.3.4.3.14", "2.16.840.1.101.3.4.3.15", "2.16.840.1.101.3.4.3.16")
	oidRSAPSS = "1.2.840.113549.1.1.10"
	ecdsaOIDs = oidSet("1.2.840.10045.2.1", "1.2.840.10045.4.1", "1.2.840.10045.4.3.1", "1.2.840.10045.4.3.2", "1.2.840.10045.4.3.3",
		"1.2.840.10045.4.3.4", "2.16.840.1.101.3.4.3.10", "2.16.840.1.101.3.4.3.11", "2.16.840.1.101.3.4.3.12")
	oidEd25519 = "1.3.101.112"
)

func oidSet(oids ...string) map[string]bool {
	m := map[string]bool{}
	for _, o := range oids {
		m[o] = true
	}
	return m
}

// algorithm is an AlgorithmIdentifier: its OID and DER parameters.
type algorithm struct {
	oid    asn1.ObjectIdentifier
	params []byte
}

func readAlgorithm(s *cryptobyte.String) (algorithm, error) {
	var alg cryptobyte.String
	var a algorithm
	if !s.ReadASN1(&alg, cbasn1.SEQUENCE) || !alg.ReadASN1ObjectIdentifier(&a.oid) {
		return a, fmt.Errorf("%w: AlgorithmIdentifier", errCMS)
	}
	a.params = alg
	return a, nil
}

var errBadSignature = errors.New("CMS signature does not verify with the signer certificate")

// checkSignature verifies sig over data with the public key of cert:
// data is hashed with h, except by Ed25519, which signs data itself. With
// preHashed, data is already the digest (a SignerInfo without signed
// attributes).
func checkSignature(cert *x509.Certificate, sigAlg algorithm, h crypto.Hash, data, sig []byte, preHashed bool) error {
	oid := sigAlg.oid.String()
	if pub, ok := cert.PublicKey.(ed25519.PublicKey); ok {
		if oid != oidEd25519 || preHashed {
			return fmt.Errorf("unsupported Ed25519 signature algorithm %s", oid)
		}
		if !ed25519.Verify(pub, data, sig) {
			return errBadSignature
		}
		return nil
	}
	digest := data
	if !preHashed {
		hh := h.New()
		hh.Write(data)
		digest = hh.Sum(nil)
	}
	switch pub := cert.PublicKey.(type) {
	case *rsa.PublicKey:
		switch {
		case oid == oidRSAPSS:
			opts, err := pssOptions(sigAlg.params, h)
			if err != nil {
				return err
			}
			if rsa.VerifyPSS(pub, opts.Hash, digest, sig, opts) != nil {
				return errBadSignature
			}
		case rsaPKCS1OIDs[oid]:
			if rsa.VerifyPKCS1v15(pub, h, digest, sig) != nil {
				return errBadSignature
			}
		default:
			return fmt.Errorf("unsupported RSA signature algorithm %s", oid)
		}
	case *ecdsa.PublicKey:
		if !ecdsaOIDs[oid] {
			return fmt.Errorf("unsupported ECDSA signature algorithm %s", oid)
		}
		if !ecdsa.VerifyASN1(pub, digest, sig) {
			return errBadSignature
		}
	default:
		return fmt.Errorf("unsupported signer key type %T", cert.PublicKey)
	}
	return nil
}

// pssOptions reads RSASSA-PSS-params (RFC 4055): the hash, which must be
// the SignerInfo's digest algorithm, MGF1 with that hash, and the salt
// length (default 20).
func pssOptions(params []byte, h crypto.Hash) (*rsa.PSSOptions, error) {
	in := cryptobyte.String(params)
	var seq cryptobyte.String
	opts := &rsa.PSSOptions{Hash: crypto.SHA1, SaltLength: 20}
	if !in.ReadASN1(&seq, cbasn1.SEQUENCE) {
		return nil, fmt.Errorf("%w: RSASSA-PSS parameters", errCMS)
	}
	if seq.PeekASN1Tag(tagExplicit0) {
		var e cryptobyte.String
		seq.ReadASN1(&e, tagExplicit0)
		a, err := readAlgorithm(&e)
		if err != nil {
			return nil, err
		}
		if opts.Hash, err = hashFor(a.oid); err != nil {
			return nil, err
		}
	}
	seq.SkipOptionalASN1(tagExplicit1) // MGF1 with the same hash: what Go's VerifyPSS uses
	if seq.PeekASN1Tag(tagExplicit2) {
		var e cryptobyte.String
		var n int64
		if !seq.ReadASN1(&e, tagExplicit2) || !e.ReadASN1Integer(&n) || n < 0 || n > 1024 {
			return nil, fmt.Errorf("%w: RSASSA-PSS salt length", errCMS)
		}
		opts.SaltLength = int(n)
	}
	if opts.Hash != h {
		return nil, fmt.Errorf("RSASSA-PSS hash %v differs from the digest algorithm %v", opts.Hash, h)
	}
	return opts, nil
}
