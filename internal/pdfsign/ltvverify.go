package pdfsign

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"time"

	"golang.org/x/crypto/ocsp"

	"github.com/quire-dev/quire/internal/pdf"
)

// verifier checks the signatures of one document.
type verifier struct {
	pdf   []byte
	d     *pdf.Document
	opt   VerifyOptions
	known *knownDigest // Sign's digest of its new signature, for the self-check

	dssRead  bool
	dssCerts []*x509.Certificate
	dssCRLs  []*x509.RevocationList
	dssOCSPs [][]byte // DER responses, parsed for the certificate they answer about
}

// maxDSSEntries bounds the certificates and CRLs read from a DSS.
const maxDSSEntries = 1000

// dss reads the certificates, CRLs and OCSP responses of the document's
// DSS once; certificates and CRLs that do not parse are skipped.
func (vr *verifier) dss() ([]*x509.Certificate, []*x509.RevocationList, [][]byte) {
	if vr.dssRead {
		return vr.dssCerts, vr.dssCRLs, vr.dssOCSPs
	}
	vr.dssRead = true
	_, cat, err := vr.d.Catalog()
	if err != nil {
		return nil, nil, nil
	}
	dss, err := vr.d.Dict(cat["DSS"])
	if err != nil {
		return nil, nil, nil
	}
	for _, der := range vr.streams(dss["Certs"]) {
		if c, err := x509.ParseCertificate(der); err == nil {
			vr.dssCerts = append(vr.dssCerts, c)
		}
	}
	for _, der := range vr.streams(dss["CRLs"]) {
		if c, err := x509.ParseRevocationList(der); err == nil {
			vr.dssCRLs = append(vr.dssCRLs, c)
		}
	}
	vr.dssOCSPs = vr.streams(dss["OCSPs"])
	return vr.dssCerts, vr.dssCRLs, vr.dssOCSPs
}

// streams decodes the streams of a DSS array, at most maxDSSEntries.
func (vr *verifier) streams(o pdf.Object) [][]byte {
	arr, _ := vr.d.Array(o)
	var out [][]byte
	for _, e := range arr[:min(len(arr), maxDSSEntries)] {
		s, err := vr.d.Resolve(e)
		if st, ok := s.(*pdf.Stream); ok && err == nil {
			if data, err := vr.d.Decode(st); err == nil {
				out = append(out, data)
			}
		}
	}
	return out
}

// intermediates pools the certificates a chain may be built from.
func (vr *verifier) intermediates(cms []*x509.Certificate) *x509.CertPool {
	pool := x509.NewCertPool()
	certs, _, _ := vr.dss()
	for _, c := range append(append([]*x509.Certificate(nil), cms...), certs...) {
		pool.AddCert(c)
	}
	return pool
}

// timestampResult is a checked RFC 3161 token.
type timestampResult struct {
	genTime time.Time
	trusted bool // its TSA chains to VerifyOptions.TSARoots now
	tsa     *x509.Certificate
	digest  []byte
}

// timestamp checks that token is over the data that digestOf hashes
// (with the hash the token names) and signed by the certificate it
// carries, and whether that TSA is trusted.
func (vr *verifier) timestamp(token []byte, digestOf func(crypto.Hash) []byte) (timestampResult, error) {
	sd, err := parseSignedData(token)
	if err != nil {
		return timestampResult{}, err
	}
	info, err := parseTimeStampToken(token)
	if err != nil {
		return timestampResult{}, err
	}
	h, err := hashFor(info.hashAlg)
	if err != nil {
		return timestampResult{}, err
	}
	if !bytes.Equal(info.digest, digestOf(h)) {
		return timestampResult{}, errors.New("token is not over this signature")
	}
	cert, err := sd.signerCert()
	if err != nil {
		return timestampResult{}, err
	}
	ch, err := hashFor(sd.signer.digestAlg)
	if err != nil {
		return timestampResult{}, err
	}
	hh := ch.New()
	hh.Write(sd.content)
	if _, err := sd.verify(hh.Sum(nil), cert); err != nil {
		return timestampResult{}, err
	}
	res := timestampResult{genTime: info.genTime, tsa: cert, digest: info.digest}
	if vr.opt.TSARoots != nil {
		_, err := cert.Verify(x509.VerifyOptions{Roots: vr.opt.TSARoots, Intermediates: vr.intermediates(sd.certs),
			CurrentTime: vr.opt.Now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}})
		res.trusted = err == nil
	}
	return res, nil
}

// verifyDocTimestamp checks a document time-stamp: its token must be over
// the byte ranges. It is valid when intact and correctly signed; Trusted
// says whether its TSA chains to the TSA roots.
func (vr *verifier) verifyDocTimestamp(r SignerResult, token []byte, ranges [4]int) SignerResult {
	ts, err := vr.timestamp(token, func(h crypto.Hash) []byte { return vr.known.of(h, vr.pdf, ranges) })
	if err != nil {
		r.Reason = fmt.Sprintf("document time-stamp: %v", err)
		return r
	}
	describeCert(&r, ts.tsa)
	r.Digest = hex.EncodeToString(ts.digest)
	r.TimestampTime, r.TimestampTrusted, r.Trusted = &ts.genTime, ts.trusted, ts.trusted
	r.DigestValid, r.SignatureValid, r.Valid = true, true, true
	return r
}

// checkCertificate verifies cert up to the roots at the verification time,
// and when that fails (an expired certificate), at the time of a trusted
// time-stamp of the signature, with the DSS's CRLs proving that the chain
// was not revoked then. It returns when the chain was found valid and
// whether revocation was checked. A CRL in the DSS that revokes the
// certificate by the time checked fails it in both cases.
func (vr *verifier) checkCertificate(cert *x509.Certificate, cms []*x509.Certificate, r SignerResult) (time.Time, bool, error) {
	opts := x509.VerifyOptions{Roots: vr.opt.Roots, Intermediates: vr.intermediates(cms), CurrentTime: vr.opt.Now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
	chains, err := cert.Verify(opts)
	if err == nil {
		checked, err := vr.notRevoked(chains[0], vr.opt.Now, false)
		return vr.opt.Now, checked, err
	}
	if r.TimestampTime == nil || !r.TimestampTrusted {
		return time.Time{}, false, err
	}
	opts.CurrentTime = *r.TimestampTime
	chains, terr := cert.Verify(opts)
	if terr != nil {
		return time.Time{}, false, fmt.Errorf("%v; at the time-stamp's time: %v", err, terr)
	}
	if _, rerr := vr.notRevoked(chains[0], opts.CurrentTime, true); rerr != nil {
		return time.Time{}, false, fmt.Errorf("%v; at the time-stamp's time: %v", err, rerr)
	}
	return opts.CurrentTime, true, nil
}

// notRevoked looks up each certificate of chain below the root in the
// DSS's OCSP responses and CRLs (signed for its issuer, issued by the
// verification time) and fails if one revokes it at or before at. With
// required, a certificate without either fails too. It reports whether
// every certificate had one.
func (vr *verifier) notRevoked(chain []*x509.Certificate, at time.Time, required bool) (bool, error) {
	_, crls, ocsps := vr.dss()
	all := true
	for i := 0; i+1 < len(chain); i++ {
		c, issuer := chain[i], chain[i+1]
		revokedAt, found := findOCSP(ocsps, c, issuer, vr.opt.Now)
		if crl := findCRL(crls, c, issuer, vr.opt.Now); crl != nil {
			found = true
			for _, e := range crl.RevokedCertificateEntries {
				if e.SerialNumber != nil && e.SerialNumber.Cmp(c.SerialNumber) == 0 && (revokedAt == nil || e.RevocationTime.Before(*revokedAt)) {
					revokedAt = &e.RevocationTime
				}
			}
		}
		switch {
		case revokedAt != nil && !revokedAt.After(at):
			return false, fmt.Errorf("%q was revoked on %s", c.Subject.String(), revokedAt.UTC().Format(time.RFC3339))
		case !found && required:
			return false, fmt.Errorf("no CRL or OCSP response for %q in the document's DSS", c.Subject.String())
		case !found:
			all = false
		}
	}
	return all, nil
}

// findOCSP looks for an OCSP response about c signed for issuer and
// produced by now; it reports whether there was one, and when it says c
// was revoked.
func findOCSP(ocsps [][]byte, c, issuer *x509.Certificate, now time.Time) (revokedAt *time.Time, found bool) {
	for _, der := range ocsps {
		resp, err := ocsp.ParseResponseForCert(der, c, issuer)
		if err != nil || resp.ThisUpdate.After(now) {
			continue
		}
		switch resp.Status {
		case ocsp.Revoked:
			return &resp.RevokedAt, true
		case ocsp.Good:
			found = true
		}
	}
	return nil, found
}

// findCRL returns the newest CRL by issuer covering c, issued by now.
func findCRL(crls []*x509.RevocationList, c, issuer *x509.Certificate, now time.Time) *x509.RevocationList {
	var best *x509.RevocationList
	for _, crl := range crls {
		if !bytes.Equal(crl.RawIssuer, c.RawIssuer) || crl.ThisUpdate.After(now) || crl.CheckSignatureFrom(issuer) != nil {
			continue
		}
		if best == nil || crl.ThisUpdate.After(best.ThisUpdate) {
			best = crl
		}
	}
	return best
}

// onlyValidationDataAfter reports whether the updates after offset end
// (where the newest signature's byte range ends) change nothing but the
// catalog's /DSS (and /Extensions): new objects, and the catalog
// otherwise equal. Such updates add what a verifier needs and leave the
// signed content alone (PAdES B-LT).
func (vr *verifier) onlyValidationDataAfter(end int, lim pdf.Limits) bool {
	if end <= 0 || end >= len(vr.pdf) {
		return false
	}
	old, err := pdf.Read(vr.pdf[:end], lim)
	if err != nil {
		return false
	}
	root, nc, err1 := vr.d.Catalog()
	oldRoot, oc, err2 := old.Catalog()
	if err1 != nil || err2 != nil || root != oldRoot {
		return false
	}
	for _, num := range vr.d.ChangedSince(old) {
		if num != root.Num {
			return false
		}
	}
	strip := func(c pdf.Dict) pdf.Dict {
		c = maps.Clone(c)
		delete(c, "DSS")
		delete(c, "Extensions")
		return c
	}
	return reflect.DeepEqual(strip(oc), strip(nc))
}
