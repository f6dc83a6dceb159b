package pdfsign

import (
	"context"
	"crypto"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
)

// Options describe one signature. Only the identity is required; the zero
// Options give an invisible PAdES B-B signature on the last page.
type Options struct {
	Name        string    // /Name: the person signing
	Reason      string    // /Reason
	Location    string    // /Location
	ContactInfo string    // /ContactInfo
	Time        time.Time // /M, the claimed signing time; zero: now

	Page       int         // 1-based page of the widget; 0: the last page
	Rect       [4]float64  // widget rectangle in page space; zero: invisible
	Appearance *pdf.Stream // normal appearance (a Form XObject) of a visible widget

	Timestamper  Timestamper // non-nil: add an RFC 3161 token (PAdES B-T)
	ContentsSize int         // bytes reserved for the CMS; 0: estimated
	// Level above LevelT adds validation data and a document time-stamp
	// after the signature (ltv.go); it needs a Timestamper.
	Level Level
	// Fetch downloads (GET) the CRLs and OCSP responses that certificates
	// name, for LevelLT and above; nil: only quire's own CA's CRL is
	// added. It must guard against SSRF: the URLs come from certificates.
	Fetch func(ctx context.Context, url string) ([]byte, error)
	// Field names an empty signature field to sign (a Slot), drawn by
	// Appearance; Page and Rect are then the field's own. Empty: a new
	// field on Page at Rect.
	Field string
	// Slots are empty signature fields to add with this signature, room
	// for later signers (slots.go).
	Slots []Slot

	// DocMDP, 1 to 3, makes this a certification signature allowing the
	// changes of that level (ISO 32000-1, 12.8.2.2); 0: an approval
	// signature.
	DocMDP int
}

// tokenReserve is the room kept for a time-stamp token: tokens with a
// certificate chain are typically 3-7 KB.
const tokenReserve = 12 << 10

// Sign signs doc with a PAdES signature (SubFilter ETSI.CAdES.detached) by
// id and returns the signed file: doc saved with its pending changes (such
// as appended pages) and the signature in one incremental update. The
// bytes doc was opened with are a byte prefix of the output, so earlier
// signatures stay valid. Errors caused by the document wrap the sentinel
// errors of package pdf or ErrSignatureTooLarge. A document that already
// carries 100 signatures (the most that Verify checks) is refused with
// pdf.ErrUnreadable. Sign saves doc: nothing is to be added to it afterwards.
//
// It also returns the hex SHA-256 of the bytes the new signature covers
// (the CMS message digest): it names this signature in any later copy of
// the file, whatever is appended to it.
//
// At Options.Level B-LT and B-LTA, the signature's update is followed by
// one adding validation data (a DSS), then one adding a document
// time-stamp. A document certified with DocMDP P=1 is refused with
// ErrCertified.
func Sign(ctx context.Context, doc *pdf.Document, id *Identity, opt Options) (out []byte, digest string, err error) {
	s, err := SignReport(ctx, doc, id, opt)
	return s.PDF, s.Digest, err
}

// Signature is a signed document and what its signing reached.
type Signature struct {
	PDF    []byte
	Digest string // as Sign's
	// Level is the PAdES level a validator finds: Options.Level, or less
	// when revocation data of a certificate could not be obtained (B-T
	// for B-LT and B-LTA), or B-T for B-B with a Timestamper.
	Level Level
}

// SignReport signs as Sign does and says which level the signature
// reached.
func SignReport(ctx context.Context, doc *pdf.Document, id *Identity, opt Options) (sig Signature, err error) {
	defer pdf.Recover(&err)
	return sign(ctx, doc, id, opt)
}

func sign(ctx context.Context, doc *pdf.Document, id *Identity, opt Options) (Signature, error) {
	before, err := signatureFields(doc)
	if err != nil {
		return Signature{}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err)
	}
	if len(before)+opt.Level.signatures() > maxSignatures {
		return Signature{}, fmt.Errorf("%w: the document already carries %d signatures, the most that are verified", pdf.ErrUnreadable, len(before))
	}
	if err := checkLevel(opt); err != nil {
		return Signature{}, err
	}
	if err := allowsSigning(doc); err != nil {
		return Signature{}, err
	}
	pages, err := doc.PagesContext(ctx)
	if ended(err) {
		return Signature{}, err
	}
	if err != nil {
		return Signature{}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err)
	}
	size := opt.ContentsSize
	if size <= 0 {
		size = estimateSize(id, opt.Timestamper != nil)
	}
	ph := newPlaceholders(size)
	value := signatureDict(opt, ph)
	if opt.DocMDP != 0 {
		if opt.DocMDP < 1 || opt.DocMDP > 3 || len(before) > 0 {
			return Signature{}, fmt.Errorf("pdfsign: DocMDP P=%d: a certification signature has P 1 to 3 and comes first", opt.DocMDP)
		}
		value["Reference"] = docMDPReference(opt.DocMDP)
	}
	var sig pdf.Ref
	if opt.Field != "" {
		sig, err = signSlot(doc, opt.Field, value, opt.Appearance)
	} else {
		sig, err = addSignatureField(doc, pages, opt, value)
	}
	if err == nil {
		err = addSlots(doc, pages, opt.Slots)
	}
	if err != nil {
		return Signature{}, err
	}
	if opt.DocMDP != 0 {
		if err := certify(doc, sig); err != nil {
			return Signature{}, err
		}
	}
	out, err := doc.Save()
	if err != nil {
		return Signature{}, err
	}
	known, contents, err := fillSignature(doc, out, ph, func(digest []byte) ([]byte, error) {
		return signCMS(ctx, cmsSigner{key: id.Key, cert: id.Certificate, chain: id.Chain},
			cmsContent{contentType: oidData, digest: digest}, opt.Timestamper)
	})
	if err != nil {
		return Signature{}, err
	}
	out, added, reached, err := addLongTerm(ctx, out, contents, id, opt, doc.Limits())
	if err != nil {
		return Signature{}, err
	}
	if err := selfCheck(ctx, out, len(before)+1+added, len(pages), doc.Limits(), known); err != nil {
		return Signature{}, err
	}
	return Signature{PDF: out, Digest: hex.EncodeToString(known.sum), Level: reached}, nil
}

// estimateSize reserves room for the CMS: the certificates, a signature
// of up to 4096-bit RSA with its attributes, and a time-stamp token.
func estimateSize(id *Identity, timestamp bool) int {
	n := 2048 + len(id.Certificate.Raw)
	for _, c := range id.Chain {
		n += len(c.Raw)
	}
	if timestamp {
		n += tokenReserve
	}
	return n
}

// placeholders are the parts of the signature dictionary that are filled
// in once the file is written.
type placeholders struct {
	byteRange, contents *pdf.Placeholder
}

// byteRangeWidth is the width of the /ByteRange placeholder, "[" and "]"
// included: room for four 10-digit numbers, which covers files up to 9 GB.
const byteRangeWidth = 1 + 4*11 + 1

// newPlaceholders makes the placeholders of a signature value whose
// /Contents holds size bytes.
func newPlaceholders(size int) placeholders {
	return placeholders{
		byteRange: &pdf.Placeholder{Text: []byte("[" + strings.Repeat(" ", byteRangeWidth-2) + "]")},
		contents:  &pdf.Placeholder{Text: []byte("<" + strings.Repeat("0", 2*size) + ">")},
	}
}

// addSignatureField adds the signature value, the field+widget that holds
// it, the page's /Annots entry and the form's /Fields entry, and returns
// the value's reference.
func addSignatureField(d *pdf.Document, pages []pdf.PageObject, opt Options, value pdf.Dict) (pdf.Ref, error) {
	i := len(pages) - 1
	if opt.Page > 0 {
		if opt.Page > len(pages) {
			return pdf.Ref{}, fmt.Errorf("pdfsign: page %d requested, document has %d", opt.Page, len(pages))
		}
		i = opt.Page - 1
	}
	pg := pages[i]
	sig := d.Add(value)
	widget := pdf.Dict{
		"Type": pdf.Name("Annot"), "Subtype": pdf.Name("Widget"), "FT": pdf.Name("Sig"),
		"T": pdf.TextString(fieldName(d)), "V": sig, "P": pg.Ref,
		"F":    pdf.Int(132), // Print | Locked
		"Rect": pdf.Array{pdf.Real(opt.Rect[0]), pdf.Real(opt.Rect[1]), pdf.Real(opt.Rect[2]), pdf.Real(opt.Rect[3])},
	}
	// PDF/A wants an appearance for every widget, an invisible one too
	// (veraPDF 6.9-2 for PDF/A-1, 6.3.3 for PDF/A-2 and -3).
	ap := opt.Appearance
	if ap == nil {
		ap = EmptyAppearance(opt.Rect[2]-opt.Rect[0], opt.Rect[3]-opt.Rect[1])
	}
	widget["AP"] = pdf.Dict{"N": ap}
	w := d.Add(widget)
	pd := pg.Dict.Clone()
	if err := d.AppendRef(pd, "Annots", w); err != nil {
		return pdf.Ref{}, fmt.Errorf("%w: page %d: %v", pdf.ErrUnreadable, i+1, err)
	}
	d.Replace(pg.Ref, pd)
	return sig, addToForm(d, w)
}

// signatureDict is the signature value with its two placeholders.
func signatureDict(opt Options, ph placeholders) pdf.Dict {
	t := opt.Time
	if t.IsZero() {
		t = time.Now()
	}
	d := pdf.Dict{
		"Type": pdf.Name("Sig"), "Filter": pdf.Name("Adobe.PPKLite"), "SubFilter": pdf.Name("ETSI.CAdES.detached"),
		"ByteRange": ph.byteRange, "Contents": ph.contents,
		"M": pdf.String(pdfDate(t)),
	}
	for k, v := range map[pdf.Name]string{"Name": opt.Name, "Reason": opt.Reason, "Location": opt.Location, "ContactInfo": opt.ContactInfo} {
		if v != "" {
			d[k] = pdf.TextString(v)
		}
	}
	return d
}

// pdfDate formats t as a PDF date string (ISO 32000-1, 7.9.4).
func pdfDate(t time.Time) string {
	s := t.Format("D:20060102150405")
	_, off := t.Zone()
	if off == 0 {
		return s + "Z"
	}
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%s%c%02d'%02d'", s, sign, off/3600, off%3600/60)
}

// fieldName picks a field name not used by a top-level form field.
func fieldName(d *pdf.Document) string {
	used := map[string]bool{}
	_, cat, _ := d.Catalog()
	if form, err := d.Dict(cat["AcroForm"]); err == nil {
		fields, _ := d.Array(form["Fields"])
		for _, f := range fields {
			if fd, err := d.Dict(f); err == nil {
				if t, ok := fd["T"].(pdf.String); ok {
					used[pdf.DecodeText(t)] = true
				}
			}
		}
	}
	for n := 1; ; n++ {
		if name := fmt.Sprintf("Signature%d", n); !used[name] {
			return name
		}
	}
}

// addToForm lists field in the catalog's /AcroForm, creating the form or
// extending the existing one (its fields kept), and sets /SigFlags 3
// (SignaturesExist | AppendOnly) so viewers save later edits incrementally.
func addToForm(d *pdf.Document, field pdf.Ref) error {
	catRef, cat, err := d.Catalog()
	if err != nil {
		return err
	}
	if r, ok := cat["AcroForm"].(pdf.Ref); ok {
		if form, err := d.Dict(r); err == nil {
			f := form.Clone()
			if err := extendForm(d, f, field); err != nil {
				return err
			}
			d.Replace(r, f)
			return nil
		}
	}
	form := pdf.Dict{}
	if f, ok := cat["AcroForm"].(pdf.Dict); ok {
		form = f.Clone()
	}
	if err := extendForm(d, form, field); err != nil {
		return err
	}
	c := cat.Clone()
	c["AcroForm"] = form
	d.Replace(catRef, c)
	return nil
}

func extendForm(d *pdf.Document, form pdf.Dict, field pdf.Ref) error {
	form["SigFlags"] = pdf.Int(pdf.IntOr(form["SigFlags"], 0) | 3)
	if err := d.AppendRef(form, "Fields", field); err != nil {
		return fmt.Errorf("%w: /AcroForm: %v", pdf.ErrUnreadable, err)
	}
	return nil
}

// fillSignature writes the /ByteRange, hashes the two ranges, puts what
// sign makes of the hash (a CMS, a time-stamp token) into /Contents, and
// returns the hash and the whole /Contents value. Offsets come from the
// placeholders, never from searching the output.
func fillSignature(doc *pdf.Document, out []byte, ph placeholders, sign func(sha256Digest []byte) ([]byte, error)) (known *knownDigest, contents []byte, err error) {
	start := ph.contents.Offset()
	end := start + len(ph.contents.Text)
	size := (len(ph.contents.Text) - 2) / 2
	ranges := [4]int{0, start, end, len(out) - end}
	br := fmt.Sprintf("[0 %d %d %d", start, end, len(out)-end)
	if len(br) >= byteRangeWidth {
		return nil, nil, fmt.Errorf("pdfsign: byte range %s] does not fit its placeholder", br)
	}
	copy(out[ph.byteRange.Offset():], br)
	h := doc.SHA256(out[:start]) // the document's bytes are hashed once per signing
	h.Write(out[end:])
	sum := h.Sum(nil)
	cms, err := sign(sum)
	if err != nil {
		return nil, nil, err
	}
	if len(cms) > size {
		return nil, nil, fmt.Errorf("%w: CMS is %d bytes, %d reserved", ErrSignatureTooLarge, len(cms), size)
	}
	hex.Encode(out[start+1:], cms)
	contents = make([]byte, size)
	copy(contents, cms)
	return &knownDigest{hash: crypto.SHA256, ranges: ranges, sum: sum}, contents, nil
}

// selfCheck re-reads the signed output: it must parse, hold want
// signatures and pages, and the new signature must be intact and cover
// the whole file. It guards against ever handing out a broken file. The
// output may be larger than lim allows the input to be: its own size is
// accepted. The new signature's digest is not computed again when the
// reader finds the byte ranges it was computed over (known).
func selfCheck(ctx context.Context, out []byte, want, pages int, lim pdf.Limits, known *knownDigest) error {
	lim.MaxInputSize = max(lim.MaxInputSize, int64(len(out)))
	res, err := verify(ctx, out, VerifyOptions{}, lim, known)
	if err != nil {
		return fmt.Errorf("pdfsign: self-check of the signed output: %w", err)
	}
	if len(res.Signers) != want { // the input's form hides the new field from readers
		return fmt.Errorf("%w: self-check: %d signatures found, %d expected", pdf.ErrUnreadable, len(res.Signers), want)
	}
	if res.Pages != pages {
		return fmt.Errorf("%w: self-check: %d pages found, %d expected", pdf.ErrUnreadable, res.Pages, pages)
	}
	last := res.Signers[want-1]
	if !last.DigestValid || !last.SignatureValid || !last.CoversWholeDocument {
		return fmt.Errorf("pdfsign: self-check: new signature not valid: %s", last.Reason)
	}
	return nil
}
