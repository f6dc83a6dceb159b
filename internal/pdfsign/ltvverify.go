package pdfsign

import (
	"bytes"
	"crypto"
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
	"golang.org/x/crypto/ocsp"

	"github.com/quire-dev/quire/internal/pdf"
)

// verifier checks the signatures of one document.
type verifier struct {
	pdf   []byte
	d     *pdf.Document
	opt   VerifyOptions
	known *knownDigest // Sign's digest of its new signature, for the self-check
	revs  *revisions
	dssOf map[*pdf.Document]*dssData
}

// dssData is what a revision's document security store holds.
type dssData struct {
	certs []*x509.Certificate
	crls  []*x509.RevocationList
	ocsps [][]byte // DER responses, parsed for the certificate they answer about
	vri   pdf.Dict
	d     *pdf.Document
}

// maxDSSEntries bounds the certificates and CRLs read from a DSS.
const maxDSSEntries = 1000

// dss reads the DSS of revision d once; certificates and CRLs that do not
// parse are skipped.
func (vr *verifier) dss(d *pdf.Document) *dssData {
	if s, ok := vr.dssOf[d]; ok {
		return s
	}
	s := &dssData{d: d}
	vr.dssOf[d] = s
	_, cat, err := d.Catalog()
	if err != nil {
		return s
	}
	dss, err := d.Dict(cat["DSS"])
	if err != nil {
		return s
	}
	for _, der := range streams(d, dss["Certs"]) {
		if c, err := x509.ParseCertificate(der); err == nil {
			s.certs = append(s.certs, c)
		}
	}
	for _, der := range streams(d, dss["CRLs"]) {
		if c, err := x509.ParseRevocationList(der); err == nil {
			s.crls = append(s.crls, c)
		}
	}
	s.ocsps = streams(d, dss["OCSPs"])
	s.vri, _ = d.Dict(dss["VRI"])
	return s
}

// streams decodes the streams of a DSS array, at most maxDSSEntries.
func streams(d *pdf.Document, o pdf.Object) [][]byte {
	arr, _ := d.Array(o)
	var out [][]byte
	for _, e := range arr[:min(len(arr), maxDSSEntries)] {
		s, err := d.Resolve(e)
		if st, ok := s.(*pdf.Stream); ok && err == nil {
			if data, err := d.Decode(st); err == nil {
				out = append(out, data)
			}
		}
	}
	return out
}

// intermediates pools the certificates a chain may be built from.
func (vr *verifier) intermediates(cms []*x509.Certificate) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, c := range append(append([]*x509.Certificate(nil), cms...), vr.dss(vr.d).certs...) {
		pool.AddCert(c)
	}
	return pool
}

// timestampResult is a checked RFC 3161 token.
type timestampResult struct {
	genTime time.Time
	trusted bool // its TSA chains to VerifyOptions.TSARoots now
	tsa     *x509.Certificate
	certs   []*x509.Certificate // those the token carries
	digest  []byte
}

// timestamp checks that token is over the data that digestOf hashes
// (with the hash the token names) and signed by the certificate it
// carries, and whether that TSA is trusted. A token over other data fails
// with errDigestMismatch, one whose signature does not hold with
// errBadSignature.
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
		return timestampResult{}, fmt.Errorf("%w: the token is over other data", errDigestMismatch)
	}
	cert, err := sd.signerCert()
	if err != nil {
		return timestampResult{}, err
	}
	ch, err := sd.digestHash()
	if err != nil {
		return timestampResult{}, err
	}
	hh := ch.New()
	hh.Write(sd.content)
	ess, err := sd.verify(hh.Sum(nil), cert)
	if err != nil {
		return timestampResult{}, err
	}
	if !ess { // RFC 3161 2.4.2 and RFC 5816: the reference validators drop such a token
		return timestampResult{}, errors.New("time-stamp token without the ESS signing-certificate attribute")
	}
	res := timestampResult{genTime: info.genTime, tsa: cert, certs: sd.certs, digest: info.digest}
	if vr.opt.TSARoots != nil {
		_, err := cert.Verify(x509.VerifyOptions{Roots: vr.opt.TSARoots, Intermediates: vr.intermediates(sd.certs),
			CurrentTime: vr.opt.Now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}})
		res.trusted = err == nil
	}
	return res, nil
}

// checkDocTimestamp checks a document time-stamp: its token must be over
// the byte ranges and signed by its TSA. Trusted says whether that TSA
// chains to the TSA roots; an untrusted one is reported and relied on for
// nothing.
func (vr *verifier) checkDocTimestamp(e *entry, token []byte, ranges [4]int) *entry {
	r := &e.res
	ts, err := vr.timestamp(token, func(h crypto.Hash) []byte { return vr.known.of(h, vr.pdf, ranges) })
	switch {
	case errors.Is(err, errDigestMismatch):
		return e.fail(subHash, "document time-stamp: %v", err)
	case errors.Is(err, errBadSignature):
		return e.fail(subCrypto, "document time-stamp: %v", err)
	case err != nil:
		return e.fail(subFormat, "document time-stamp: %v", err)
	}
	e.docTST = &ts
	describeCert(r, ts.tsa)
	r.Digest = hex.EncodeToString(ts.digest)
	r.TimestampTime, r.TimestampTrusted, r.Trusted = &ts.genTime, ts.trusted, ts.trusted
	r.DigestValid, r.SignatureValid = true, true
	if !ts.trusted {
		e.indeterminate(subNoChain, "the time-stamp authority %q is not trusted: the time-stamp proves nothing", ts.tsa.Subject.CommonName)
	}
	return e
}

// trust checks the signer certificate of e up to the roots at the
// verification time, and when that fails (an expired certificate), at
// the time of a trusted time-stamp of the signature, with revocation data
// proving that the chain was not revoked then. Revocation data that
// revokes a certificate by the time checked fails it.
func (vr *verifier) trust(e *entry) {
	r, cert := &e.res, e.cert
	if vr.opt.Roots == nil {
		e.indeterminate(subNoChain, "no trust anchors given")
		return
	}
	opts := x509.VerifyOptions{Roots: vr.opt.Roots, Intermediates: vr.intermediates(e.sd.certs), CurrentTime: vr.opt.Now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
	chains, err := cert.Verify(opts)
	if err == nil {
		revokedAt, who, complete := vr.revocation(e, chains[0], vr.opt.Now)
		provedBefore := e.sigTST != nil && e.sigTST.trusted && revokedAt != nil && e.sigTST.genTime.Before(*revokedAt)
		switch {
		case revokedAt == nil || provedBefore:
		case e.sigTST != nil && e.sigTST.trusted:
			e.revoked = true
			e.fail(subRevoked, "certificate %q was revoked on %s, before the signature's trusted time-stamp", who.Subject.String(), revokedAt.UTC().Format(time.RFC3339))
			return
		default:
			e.revoked = true
			e.indeterminate(subRevokedNoPOE, "certificate %q was revoked on %s, and no trusted time-stamp shows the signature was made before", who.Subject.String(), revokedAt.UTC().Format(time.RFC3339))
			return
		}
		now := vr.opt.Now
		r.Trusted, r.CertificateCheckedAt, r.RevocationChecked = true, &now, complete
		if !complete {
			e.indeterminate(subNoRevocation, "no revocation data (CRL or OCSP response) in the document for every certificate of the chain")
		}
		return
	}
	if e.sigTST != nil && e.sigTST.trusted {
		at := e.sigTST.genTime
		opts.CurrentTime = at
		chains, terr := cert.Verify(opts)
		if terr == nil {
			revokedAt, who, complete := vr.revocation(e, chains[0], at)
			switch {
			case revokedAt != nil:
				e.revoked = true
				e.fail(subRevoked, "signer certificate not trusted: %v; at the time-stamp's time: %q was revoked on %s", err, who.Subject.String(), revokedAt.UTC().Format(time.RFC3339))
			case !complete:
				e.indeterminate(subOutOfBounds, "signer certificate not trusted: %v; at the time-stamp's time: no CRL or OCSP response for every certificate of the chain in the document's DSS", err)
			default:
				r.Trusted, r.CertificateCheckedAt, r.RevocationChecked = true, &at, true
			}
			return
		}
		err = fmt.Errorf("%v; at the time-stamp's time: %v", err, terr)
	}
	var inv x509.CertificateInvalidError
	opts.CurrentTime = cert.NotAfter.Add(-time.Second) // a chain while it was valid, if there is one
	if _, cerr := cert.Verify(opts); errors.As(err, &inv) && inv.Reason == x509.Expired && cerr == nil {
		e.indeterminate(subOutOfBounds, "signer certificate not trusted: %v (no trusted time-stamp proves the signature was made while it was valid)", err)
		return
	}
	e.indeterminate(subNoChain, "signer certificate not trusted: %v", err)
}

// revocation looks up each certificate of chain below the root in the
// revocation data of the document's DSS and of e's signed attributes
// (issued for its issuer by the verification time). It returns the
// earliest revocation by at found, if any, of which certificate, and
// whether every certificate had revocation data.
func (vr *verifier) revocation(e *entry, chain []*x509.Certificate, at time.Time) (*time.Time, *x509.Certificate, bool) {
	s := vr.dss(vr.d)
	crls, ocsps := s.crls, s.ocsps
	for _, der := range e.revCRLs {
		if c, err := x509.ParseRevocationList(der); err == nil {
			crls = append(crls, c)
		}
	}
	ocsps = append(ocsps, e.revOCSPs...)
	var earliest *time.Time
	var who *x509.Certificate
	all := true
	for i := 0; i+1 < len(chain); i++ {
		c, issuer := chain[i], chain[i+1]
		revokedAt, found := findOCSP(ocsps, c, issuer, vr.opt.Now)
		if crl := findCRL(crls, c, issuer, vr.opt.Now); crl != nil {
			found = true
			for _, entry := range crl.RevokedCertificateEntries {
				if entry.SerialNumber != nil && entry.SerialNumber.Cmp(c.SerialNumber) == 0 && (revokedAt == nil || entry.RevocationTime.Before(*revokedAt)) {
					revokedAt = &entry.RevocationTime
				}
			}
		}
		if revokedAt != nil && !revokedAt.After(at) && (earliest == nil || revokedAt.Before(*earliest)) {
			earliest, who = revokedAt, c
		}
		all = all && found
	}
	return earliest, who, all
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

// oidRevocationArchive is Adobe's signed attribute carrying the CRLs and
// OCSP responses of the chain (adbe-revocationInfoArchival).
const oidRevocationArchive = "1.2.840.113583.1.1.8"

// revocationArchive reads the CRLs and OCSP responses of the
// adbe-revocationInfoArchival attribute: SEQUENCE { crl [0] EXPLICIT
// SEQUENCE OF CRL, ocsp [1] EXPLICIT SEQUENCE OF OCSPResponse, ... }.
func revocationArchive(attrs map[string][]byte) (crls, ocsps [][]byte) {
	in := cryptobyte.String(attrs[oidRevocationArchive])
	var seq cryptobyte.String
	if !in.ReadASN1(&seq, cbasn1.SEQUENCE) {
		return nil, nil
	}
	for _, part := range []struct {
		tag cbasn1.Tag
		out *[][]byte
	}{{tagExplicit0, &crls}, {tagExplicit1, &ocsps}} {
		var wrapped, list cryptobyte.String
		if !seq.PeekASN1Tag(part.tag) || !seq.ReadASN1(&wrapped, part.tag) || !wrapped.ReadASN1(&list, cbasn1.SEQUENCE) {
			continue
		}
		for !list.Empty() {
			var el cryptobyte.String
			var tag cbasn1.Tag
			if !list.ReadAnyASN1Element(&el, &tag) {
				break
			}
			*part.out = append(*part.out, el)
		}
	}
	return crls, ocsps
}

// revocationFound says what revocation data the document offers for e:
// its VRI entry's, else the whole DSS's, else its signed attributes'.
func (vr *verifier) revocationFound(e *entry) Revocation {
	s := vr.dss(vr.d)
	if e.sd != nil && s.vri != nil {
		sum := sha1.Sum(contentsOf(e.signed))
		if entry, err := s.d.Dict(s.vri[pdf.Name(strings.ToUpper(hex.EncodeToString(sum[:])))]); err == nil {
			crls, _ := s.d.Array(entry["CRL"])
			ocsps, _ := s.d.Array(entry["OCSP"])
			if len(crls)+len(ocsps) > 0 {
				return Revocation{CRL: len(crls), OCSP: len(ocsps), Where: "dss"}
			}
		}
	}
	if len(s.crls)+len(s.ocsps) > 0 {
		return Revocation{CRL: len(s.crls), OCSP: len(s.ocsps), Where: "dss"}
	}
	if len(e.revCRLs)+len(e.revOCSPs) > 0 {
		return Revocation{CRL: len(e.revCRLs), OCSP: len(e.revOCSPs), Where: "signed-attributes"}
	}
	return Revocation{Where: "none"}
}
