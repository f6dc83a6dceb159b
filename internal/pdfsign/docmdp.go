package pdfsign

import (
	"errors"
	"fmt"

	"github.com/quire-dev/quire/internal/pdf"
)

// ErrCertified: the document carries a certification signature whose
// DocMDP permissions forbid the change asked for: any change with P=1,
// a new page with any P (ISO 32000-1, 12.8.2.2: P=2 allows filling in
// forms and signing, P=3 also annotations; neither allows pages).
var ErrCertified = errors.New("pdfsign: the document's certification signature forbids this change")

// Certification is the DocMDP P (1 to 3) of d's certification signature
// (the catalog's /Perms /DocMDP); 0 when it has none. A certified
// document takes no new pages; with P=1 it takes no signature either.
func Certification(d *pdf.Document) int {
	_, cat, err := d.Catalog()
	if err != nil {
		return 0
	}
	perms, err := d.Dict(cat["Perms"])
	if err != nil {
		return 0
	}
	sig, err := d.Dict(perms["DocMDP"])
	if err != nil {
		return 0
	}
	return docMDP(d, sig)
}

// docMDP reads P from the DocMDP transform of a signature dictionary's
// /Reference; 0 when there is none. P defaults to 2; a value outside 1-3
// is read as 1, the strictest.
func docMDP(d *pdf.Document, sig pdf.Dict) int {
	refs, _ := d.Array(sig["Reference"])
	for _, r := range refs {
		ref, err := d.Dict(r)
		if err != nil || ref["TransformMethod"] != pdf.Name("DocMDP") {
			continue
		}
		params, _ := d.Dict(ref["TransformParams"])
		p, err := d.Resolve(params["P"])
		if err != nil {
			return 1
		}
		if n := pdf.IntOr(p, 2); n >= 1 && n <= 3 {
			return n
		}
		return 1
	}
	return 0
}

// allowsSigning refuses a document certified with P=1.
func allowsSigning(d *pdf.Document) error {
	if Certification(d) == 1 {
		return fmt.Errorf("%w: it is certified with DocMDP P=1 (no changes allowed, not even a signature)", ErrCertified)
	}
	return nil
}

// docMDPReference is the /Reference of a certification signature
// allowing the changes of level p.
func docMDPReference(p int) pdf.Array {
	return pdf.Array{pdf.Dict{"Type": pdf.Name("SigRef"), "TransformMethod": pdf.Name("DocMDP"),
		"TransformParams": pdf.Dict{"Type": pdf.Name("TransformParams"), "P": pdf.Int(p), "V": pdf.Name("1.2")}}}
}

// certify makes the signature value sig the document's certification
// signature: the catalog's /Perms /DocMDP names it. It runs after
// addSignatureField, which may have replaced the catalog already.
func certify(d *pdf.Document, sig pdf.Ref) error {
	catRef, cat, err := d.Catalog()
	if err != nil {
		return err
	}
	c := cat.Clone()
	c["Perms"] = pdf.Dict{"DocMDP": sig}
	d.Replace(catRef, c)
	return nil
}
