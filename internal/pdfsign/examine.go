package pdfsign

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"

	"github.com/quire-dev/quire/internal/pdf"
)

// judge finds the changes after each entry and judges them against the
// document's certification level and the entry's locks, then says each
// entry in the examiner's words. Sign's self-check (a known digest)
// judges its newest entry only.
func (vr *verifier) judge(ctx context.Context, entries []*entry) error {
	for _, e := range entries {
		if e.end > 0 {
			vr.revs.addSignedRevision(e.end)
		}
	}
	docMDP := 0
	for _, e := range entries {
		if e.res.Certification > 0 {
			docMDP = e.res.Certification
			break
		}
	}
	for i, e := range entries {
		e.res.Modifications = Modifications{Level: ClassNone, Permitted: true, Changes: []Change{}}
		if e.end == 0 || (vr.known != nil && i != len(entries)-1) {
			continue
		}
		changes, err := vr.revs.after(e.end)
		if ended(err) {
			return err
		}
		if err != nil {
			e.fail(subFormat, "a revision after the signature cannot be read: %v", err)
			continue
		}
		e.res.CoversWholeDocument = len(changes) == 0
		if len(changes) == 0 {
			continue // nothing to judge, nor to walk the signed revision for
		}
		signed, err := vr.revs.rolesOf(e.end)
		if ended(err) {
			return err
		}
		if err != nil {
			e.fail(subFormat, "the revision the signature covers cannot be read: %v", err)
			continue
		}
		p := permissions{docMDP: docMDP, lock: fieldMDP(signed.doc, e.signed, e.field), signed: signed}
		m := p.judge(ctx, changes)
		if err := ctx.Err(); err != nil {
			return err
		}
		e.res.Modifications = m
		e.res.CoversWholeDocument = classRank[m.Level] <= classRank[ClassLTV]
		for _, ch := range m.Changes {
			if !ch.Permitted {
				e.fail(subFormat, "changed after it was signed: %s", describeChange(ch))
				break
			}
		}
	}
	for i, e := range entries {
		vr.examine(e, entries[i+1:])
	}
	return nil
}

// describeChange says a change in words, with where it is.
func describeChange(ch Change) string {
	s := ch.What
	if ch.Object > 0 {
		s += fmt.Sprintf(" (object %d", ch.Object)
		if ch.Page > 0 {
			s += fmt.Sprintf(", page %d", ch.Page)
		}
		s += ")"
	}
	return s
}

// examine fills in the entry's level, indication, revocation data and
// validity; later are the entries after it.
func (vr *verifier) examine(e *entry, later []*entry) {
	r := &e.res
	r.Revocation = vr.revocationFound(e)
	r.Level = vr.level(e, later)
	switch {
	case e.failed != "":
		r.Indication, r.SubIndication = TotalFailed, &e.failed
	case e.undecided != "":
		r.Indication, r.SubIndication = Indeterminate, &e.undecided
	default:
		r.Indication = TotalPassed
	}
	r.Valid = e.failed == "" && r.DigestValid && r.SignatureValid && r.Trusted && !e.weak && !e.revoked
}

// level is the signature's format level (ETSI EN 319 142-1, 6): B for
// the signature itself, T with a time-stamp over it (its own or a later
// document time-stamp), LT with revocation data for its chain in the
// document, LTA with a document time-stamp over that data. It is the
// structure found; whether the time-stamps are trusted is said
// elsewhere. Nil for a document time-stamp or an unreadable CMS.
func (vr *verifier) level(e *entry, later []*entry) *string {
	sd := e.sd
	if sd == nil && !e.timestamp { // a forged byte range: the CMS may still be read
		sd, _ = parseSignedData(contentsOf(e.value))
	}
	if e.timestamp || sd == nil {
		return nil
	}
	base := "PKCS7-"
	if e.res.SubFilter == "ETSI.CAdES.detached" {
		if !baseline(sd.signer) {
			return nil
		}
		base = "PAdES-BASELINE-"
	}
	if e.cert == nil {
		return ptr(base + "B")
	}
	lvl := "B"
	var docTS []*entry
	for _, l := range later {
		if l.timestamp && l.docTST != nil {
			docTS = append(docTS, l)
		}
	}
	if e.sigTST == nil && len(docTS) == 0 {
		return ptr(base + lvl)
	}
	lvl = "T"
	if !vr.validationData(e, vr.d) {
		return ptr(base + lvl)
	}
	lvl = "LT"
	for _, ts := range docTS {
		if d, err := vr.revs.doc(ts.end); err == nil && vr.validationData(e, d) {
			lvl = "LTA"
		}
	}
	return ptr(base + lvl)
}

func ptr(s string) *string { return &s }

// baseline reports whether a CAdES SignerInfo meets PAdES baseline's
// rules for signed attributes (ETSI EN 319 142-1, 5.3 and 6.3): the ESS
// signing certificate, no CMS signing-time (the time is the dictionary's
// /M), no attribute twice. EU DSS calls one that does not PDF-NOT-ETSI.
func baseline(si signerInfo) bool {
	_, v2 := si.attrs[oidAttrSigningCertV2.String()]
	_, v1 := si.attrs[oidAttrSigningCert.String()]
	_, signingTime := si.attrs[oidAttrSigningTime]
	return (v1 || v2) && !signingTime && !si.repeated
}

const oidAttrSigningTime = "1.2.840.113549.1.9.5"

// validationData reports whether revision d (its DSS) or the signed
// attributes hold revocation data for every certificate below the root
// of the signer's chain and of its time-stamp authority's, the chains
// built from the certificates the CMS, the token and the DSS carry. That
// is what EU DSS asks of B-LT.
func (vr *verifier) validationData(e *entry, d *pdf.Document) bool {
	if e.cert == nil {
		return false
	}
	s := vr.dss(d)
	crls, ocsps := s.crls, append(append([][]byte{}, s.ocsps...), e.revOCSPs...)
	for _, der := range e.revCRLs {
		if c, err := x509.ParseRevocationList(der); err == nil {
			crls = append(crls, c)
		}
	}
	covered := func(c *x509.Certificate, carried []*x509.Certificate) bool {
		pool := append(append([]*x509.Certificate{}, carried...), s.certs...)
		for range 16 { // chains are short; a loop of issuers ends here
			issuer := issuerOf(c, pool)
			if issuer == nil {
				return false
			}
			if bytes.Equal(issuer.Raw, c.Raw) {
				return true
			}
			_, found := findOCSP(ocsps, c, issuer, vr.opt.Now)
			if !found && findCRL(crls, c, issuer, vr.opt.Now) == nil {
				return false
			}
			c = issuer
		}
		return false
	}
	if e.sigTST != nil && !covered(e.sigTST.tsa, e.sigTST.certs) {
		return false
	}
	return covered(e.cert, e.sd.certs)
}
