package pdfsign

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"golang.org/x/crypto/ocsp"

	"github.com/quire-dev/quire/internal/pdf"
)

// Level is a PAdES baseline level (ETSI EN 319 142-1).
type Level int

const (
	LevelB   Level = iota // B-B: the signature alone (B-T when Options.Timestamper is set)
	LevelT                // B-T: with a signature time-stamp
	LevelLT               // B-LT: and, after it, a DSS with the certificates and CRLs to check it offline
	LevelLTA              // B-LTA: and, after the DSS, a document time-stamp over everything
)

var levelNames = []string{"B-B", "B-T", "B-LT", "B-LTA"}

func (l Level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}

// ParseLevel reads "B-B", "B-T", "B-LT" or "B-LTA".
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if strings.EqualFold(s, n) {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("pdfsign: unknown PAdES level %q (want B-B, B-T, B-LT or B-LTA)", s)
}

// signatures is how many signatures a signing at level l adds.
func (l Level) signatures() int {
	if l >= LevelLTA {
		return 2
	}
	return 1
}

func checkLevel(opt Options) error {
	if opt.Level >= LevelT && opt.Timestamper == nil {
		return fmt.Errorf("pdfsign: PAdES %s needs a time-stamp authority", opt.Level)
	}
	if opt.Level > LevelLTA || opt.Level < LevelB {
		return fmt.Errorf("pdfsign: unknown PAdES level %d", int(opt.Level))
	}
	return nil
}

// addLongTerm appends to b, just signed with contents as /Contents, the
// updates of opt.Level: a DSS (B-LT), then a document time-stamp (B-LTA).
// Both are incremental updates after the signed byte range, so the
// signature stays intact. It returns the output, the number of
// signatures it added and the level reached: B-LT and B-LTA only when
// the DSS holds revocation data for every certificate of the signer's
// and the time-stamp authority's chains (else a validator finds B-T).
func addLongTerm(ctx context.Context, b, contents []byte, id *Identity, opt Options, lim pdf.Limits) ([]byte, int, Level, error) {
	reached := LevelB
	if opt.Timestamper != nil {
		reached = LevelT
	}
	if opt.Level < LevelLT {
		return b, 0, reached, nil
	}
	v := validationData(ctx, contents, id, opt)
	if v.complete {
		reached = LevelLT
	}
	out, err := appendDSS(b, lim, contents, v)
	if err != nil || opt.Level < LevelLTA {
		return out, 0, reached, err
	}
	out, err = appendDocTimestamp(ctx, out, opt.Timestamper, lim)
	if reached == LevelLT {
		reached = LevelLTA
	}
	return out, 1, reached, err
}

// validation is what a DSS holds: certificates, and revocation data as
// DER CRLs and OCSP responses.
type validation struct {
	certs       []*x509.Certificate
	crls, ocsps [][]byte
	complete    bool // every certificate below a root has its CRL or OCSP response
}

// validationData gathers the certificates of the signer's chain and of
// the time-stamp's, and revocation data for each certificate below a
// root (revocation). Revocation data that cannot be obtained is left
// out, and the validation is not complete: the signature is still valid,
// at B-T, and a verifier may find the data elsewhere.
func validationData(ctx context.Context, contents []byte, id *Identity, opt Options) validation {
	certs := append([]*x509.Certificate{id.Certificate}, id.Chain...)
	if sd, err := parseSignedData(contents); err == nil {
		if tok, ok := sd.signer.unsigned[oidAttrTimeStampToken.String()]; ok {
			if ts, err := parseSignedData(tok); err == nil {
				certs = appendNew(certs, ts.certs...)
			}
		}
	}
	at := opt.Time
	if at.IsZero() {
		at = time.Now()
	}
	v := validation{certs: certs, complete: true}
	fetched := map[string]bool{}
	for _, c := range certs {
		issuer := issuerOf(c, certs)
		switch {
		case issuer == c: // a root: a trust anchor has no revocation data
		case issuer == nil: // its issuer is unknown: nothing can be checked
			v.complete = false
		default:
			v.complete = v.revocation(ctx, c, issuer, id, opt, at, fetched) && v.complete
		}
	}
	return v
}

// revocation adds the revocation data of c, issued by issuer, and
// reports whether there was any: the CRL of quire's own CA, issued now;
// or, for other issuers, a "good" answer of the OCSP responder c names,
// else the CRL it names (once per URL: fetched).
func (v *validation) revocation(ctx context.Context, c, issuer *x509.Certificate, id *Identity, opt Options, at time.Time, fetched map[string]bool) bool {
	if id.ca != nil && bytes.Equal(issuer.Raw, id.ca.cert.Raw) {
		der, err := id.ca.issueCRL(at)
		if err == nil {
			v.crls = append(v.crls, der)
		}
		return err == nil
	}
	if opt.Fetch == nil {
		return false
	}
	if der, err := fetchOCSP(ctx, opt.Fetch, c, issuer); err == nil {
		v.ocsps = append(v.ocsps, der)
		return true
	}
	for _, u := range c.CRLDistributionPoints {
		ok, seen := fetched[u]
		switch {
		case ok: // the same CRL, added for an earlier certificate
			return true
		case seen || !isHTTP(u):
			continue
		}
		der, err := fetchCRL(ctx, opt.Fetch, u, issuer)
		fetched[u] = err == nil
		if err == nil {
			v.crls = append(v.crls, der)
			return true
		}
	}
	return false
}

func isHTTP(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

// fetchOCSP asks the first OCSP responder c names about c, by GET (RFC
// 5019, so that it goes through the same fetcher as the CRLs), and returns
// the response if it is signed for issuer and says "good".
func fetchOCSP(ctx context.Context, fetch func(context.Context, string) ([]byte, error), c, issuer *x509.Certificate) ([]byte, error) {
	if len(c.OCSPServer) == 0 || !isHTTP(c.OCSPServer[0]) {
		return nil, errors.New("no OCSP responder")
	}
	req, err := ocsp.CreateRequest(c, issuer, nil)
	if err != nil {
		return nil, err
	}
	der, err := fetch(ctx, strings.TrimRight(c.OCSPServer[0], "/")+"/"+url.PathEscape(base64.StdEncoding.EncodeToString(req)))
	if err != nil {
		return nil, err
	}
	resp, err := ocsp.ParseResponseForCert(der, c, issuer)
	if err != nil {
		return nil, err
	}
	if resp.Status != ocsp.Good {
		return nil, fmt.Errorf("OCSP status %d", resp.Status)
	}
	return der, nil
}

// fetchCRL downloads a CRL (DER, or PEM as some servers send it) and
// checks that issuer signed it.
func fetchCRL(ctx context.Context, fetch func(context.Context, string) ([]byte, error), u string, issuer *x509.Certificate) ([]byte, error) {
	der, err := fetch(ctx, u)
	if err != nil {
		return nil, err
	}
	if b, _ := pem.Decode(der); b != nil {
		der = b.Bytes
	}
	crl, err := x509.ParseRevocationList(der)
	if err != nil {
		return nil, err
	}
	if err := crl.CheckSignatureFrom(issuer); err != nil {
		return nil, err
	}
	return der, nil
}

// issuerOf finds the certificate among certs that issued c; c itself when
// it is self-signed, nil when none did.
func issuerOf(c *x509.Certificate, certs []*x509.Certificate) *x509.Certificate {
	for _, p := range certs {
		if bytes.Equal(p.RawSubject, c.RawIssuer) && c.CheckSignatureFrom(p) == nil {
			return p
		}
	}
	return nil
}

// appendNew appends the certificates of add that list does not hold yet.
func appendNew(list []*x509.Certificate, add ...*x509.Certificate) []*x509.Certificate {
	for _, c := range add {
		dup := false
		for _, have := range list {
			dup = dup || bytes.Equal(have.Raw, c.Raw)
		}
		if !dup {
			list = append(list, c)
		}
	}
	return list
}

// reopen reads a file this package just wrote, to add an update to it;
// lim applies, with room for the file's own size.
func reopen(b []byte, lim pdf.Limits) (*pdf.Document, error) {
	lim.MaxInputSize = max(lim.MaxInputSize, int64(len(b)))
	return pdf.Read(b, lim)
}

// appendDSS adds to b an update holding the document security store
// (ISO 32000-2, 12.8.4.3): the certificates, CRLs and OCSP responses, and a VRI entry for
// the signature whose /Contents is contents, keyed by the upper-case hex
// SHA-1 of it. A DSS already in the document is extended.
func appendDSS(b []byte, lim pdf.Limits, contents []byte, v validation) ([]byte, error) {
	d, err := reopen(b, lim)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: adding the DSS: %w", err)
	}
	catRef, cat, err := d.Catalog()
	if err != nil {
		return nil, err
	}
	dss := pdf.Dict{"Type": pdf.Name("DSS")}
	if old, err := d.Dict(cat["DSS"]); err == nil {
		dss = old.Clone()
	}
	vriEntry := pdf.Dict{}
	for _, part := range []struct {
		key, vriKey pdf.Name
		ders        [][]byte
	}{{"Certs", "Cert", rawOf(v.certs)}, {"CRLs", "CRL", v.crls}, {"OCSPs", "OCSP", v.ocsps}} {
		var refs pdf.Array
		for _, der := range part.ders {
			r := d.Add(&pdf.Stream{Dict: pdf.Dict{}, Data: der})
			refs = append(refs, r)
			if err := d.AppendRef(dss, part.key, r); err != nil {
				return nil, fmt.Errorf("%w: /DSS: %v", pdf.ErrUnreadable, err)
			}
		}
		if len(refs) > 0 {
			vriEntry[part.vriKey] = refs
		}
	}
	vri := pdf.Dict{}
	if old, err := d.Dict(dss["VRI"]); err == nil {
		vri = old.Clone()
	}
	sum := sha1.Sum(contents)
	vri[pdf.Name(strings.ToUpper(hex.EncodeToString(sum[:])))] = vriEntry
	dss["VRI"] = vri
	c := cat.Clone()
	c["DSS"] = d.Add(dss)
	d.Replace(catRef, c)
	return d.Save()
}

func rawOf(certs []*x509.Certificate) [][]byte {
	out := make([][]byte, len(certs))
	for i, c := range certs {
		out[i] = c.Raw
	}
	return out
}

// appendDocTimestamp adds an invisible document time-stamp (ISO 32000-2,
// 12.8.5): an RFC 3161 token over every byte before it, the DSS included.
func appendDocTimestamp(ctx context.Context, b []byte, tsa Timestamper, lim pdf.Limits) ([]byte, error) {
	d, err := reopen(b, lim)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: adding the document time-stamp: %w", err)
	}
	pages, err := d.Pages()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err)
	}
	ph := newPlaceholders(tokenReserve)
	value := pdf.Dict{"Type": pdf.Name("DocTimeStamp"), "Filter": pdf.Name("Adobe.PPKLite"), "SubFilter": pdf.Name("ETSI.RFC3161"),
		"ByteRange": ph.byteRange, "Contents": ph.contents}
	if _, err := addSignatureField(d, pages, Options{}, value); err != nil {
		return nil, err
	}
	out, err := d.Save()
	if err != nil {
		return nil, err
	}
	_, _, err = fillSignature(d, out, ph, func(digest []byte) ([]byte, error) {
		tok, err := tsa.Timestamp(ctx, digest)
		if err != nil {
			return nil, fmt.Errorf("pdfsign: document time-stamp: %w", err)
		}
		return tok, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TSAWithoutRevocation asks ts for a time-stamp and returns the subjects
// of the certificates of its token's chain (roots aside) that name
// neither a CRL nor an OCSP responder: no validator can find revocation
// data for them, so no signature time-stamped by ts reaches B-LT. A
// token without its certificates counts as one such subject.
func TSAWithoutRevocation(ctx context.Context, ts Timestamper) ([]string, error) {
	digest := sha256.Sum256([]byte("quire: can this time-stamp authority support PAdES B-LT?"))
	tok, err := ts.Timestamp(ctx, digest[:])
	if err != nil {
		return nil, err
	}
	sd, err := parseSignedData(tok)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: the time-stamp token: %w", err)
	}
	if len(sd.certs) == 0 {
		return []string{"(the token carries no certificate)"}, nil
	}
	var out []string
	for _, c := range sd.certs {
		if issuerOf(c, sd.certs) == c || len(c.CRLDistributionPoints) > 0 || len(c.OCSPServer) > 0 {
			continue
		}
		out = append(out, c.Subject.String())
	}
	return out, nil
}
