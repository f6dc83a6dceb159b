package pdfsign

import (
	"errors"
	"fmt"
)

// ErrCertified: the document carries a certification signature whose
// DocMDP permissions forbid the change asked for: any change with P=1,
// a new page with any P (ISO 32000-1, 12.8.2.2: P=2 allows filling in
// forms and signing, P=3 also annotations; neither allows pages).
var ErrCertified = errors.New("pdfsign: the document's certification signature forbids this change")

// certification is the DocMDP P of the document's certification
// signature (the catalog's /Perms /DocMDP); 0 when it has none.
func (d *document) certification() int {
	_, cat, err := d.catalog()
	if err != nil {
		return 0
	}
	perms, err := d.dict(cat["Perms"])
	if err != nil {
		return 0
	}
	sig, err := d.dict(perms["DocMDP"])
	if err != nil {
		return 0
	}
	return d.docMDP(sig)
}

// docMDP reads P from the DocMDP transform of a signature dictionary's
// /Reference; 0 when there is none. P defaults to 2; a value outside 1-3
// is read as 1, the strictest.
func (d *document) docMDP(sig Dict) int {
	refs, _ := d.array(sig["Reference"])
	for _, r := range refs {
		ref, err := d.dict(r)
		if err != nil || ref["TransformMethod"] != Name("DocMDP") {
			continue
		}
		params, _ := d.dict(ref["TransformParams"])
		p, err := d.resolve(params["P"])
		if err != nil {
			return 1
		}
		switch n := intOr(p, 2); {
		case n >= 1 && n <= 3:
			return n
		default:
			return 1
		}
	}
	return 0
}

// allowsSigning refuses a document certified with P=1.
func (d *document) allowsSigning() error {
	if d.certification() == 1 {
		return fmt.Errorf("%w: it is certified with DocMDP P=1 (no changes allowed, not even a signature)", ErrCertified)
	}
	return nil
}

// allowsPages refuses a certified document: no DocMDP level allows pages.
func (d *document) allowsPages() error {
	if p := d.certification(); p != 0 {
		return fmt.Errorf("%w: it is certified with DocMDP P=%d, which allows no new pages", ErrCertified, p)
	}
	return nil
}

// docMDPReference is the /Reference of a certification signature
// allowing the changes of level p.
func docMDPReference(p int) Array {
	return Array{Dict{"Type": Name("SigRef"), "TransformMethod": Name("DocMDP"),
		"TransformParams": Dict{"Type": Name("TransformParams"), "P": Int(p), "V": Name("1.2")}}}
}

// certify makes the signature value sig the document's certification
// signature: the catalog's /Perms /DocMDP names it.
func certify(u *update, sig Ref) error {
	catRef, _, err := u.doc.catalog()
	if err != nil {
		return err
	}
	cat, ok := u.current(catRef).(Dict)
	if !ok {
		return fmt.Errorf("%w: the catalog is not a dictionary", ErrUnreadable)
	}
	c := cat.clone()
	c["Perms"] = Dict{"DocMDP": sig}
	u.replace(catRef, c)
	return nil
}
