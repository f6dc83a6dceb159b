package pdfsign

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// Options describe one signature. Only the identity is required; the zero
// Options give an invisible PAdES B-B signature on the last page.
type Options struct {
	Name        string    // /Name: the person signing
	Reason      string    // /Reason
	Location    string    // /Location
	ContactInfo string    // /ContactInfo
	Time        time.Time // /M, the claimed signing time; zero: now

	Page       int        // 1-based page of the widget; 0: the last page
	Rect       [4]float64 // widget rectangle in page space; zero: invisible
	Appearance *Stream    // normal appearance (a Form XObject) of a visible widget

	Timestamper Timestamper // non-nil: add an RFC 3161 token (PAdES B-T)
	// Level above LevelT adds validation data and a document time-stamp
	// after the signature (ltv.go); it needs a Timestamper.
	Level Level
	// FetchCRL downloads the CRL a certificate names (its distribution
	// point), for LevelLT and above; nil: only quire's own CA's CRL is
	// added. It must guard against SSRF: the URLs come from certificates.
	FetchCRL func(ctx context.Context, url string) ([]byte, error)
	// DocMDP, 1 to 3, makes this a certification signature allowing the
	// changes of that level (ISO 32000-1, 12.8.2.2); 0: an approval
	// signature.
	DocMDP       int
	ContentsSize int // bytes reserved for the CMS; 0: estimated
	Limits       Limits
}

// tokenReserve is the room kept for a time-stamp token: tokens with a
// certificate chain are typically 3-7 KB.
const tokenReserve = 12 << 10

// Sign returns pdf with an incremental update that adds a PAdES signature
// (SubFilter ETSI.CAdES.detached) by id, followed, at Options.Level B-LT
// and B-LTA, by the updates that add validation data and a document
// time-stamp.  A document certified with DocMDP P=1 is refused with
// ErrCertified. The input is a byte prefix of the
// output, so earlier signatures stay valid, unless the input's structure
// is damaged and it carries no signature: then it is rewritten cleanly
// first. Errors caused by the input wrap the sentinel errors of this
// package. A document that already carries 100 signatures (the most that
// Verify checks) is refused with ErrUnreadable.
//
// It also returns the hex SHA-256 of the bytes the new signature covers
// (the CMS message digest): it names this signature in any later copy of
// the file, whatever is appended to it.
func Sign(ctx context.Context, pdf []byte, id *Identity, opt Options) (out []byte, digest string, err error) {
	defer catchPanic(&err)
	d, err := openForUpdate(ctx, pdf, opt.Limits)
	if err != nil {
		return nil, "", err
	}
	before, err := d.signatureFields()
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	if len(before)+opt.Level.signatures() > maxSignatures {
		return nil, "", fmt.Errorf("%w: the document already carries %d signatures, the most that are verified", ErrUnreadable, len(before))
	}
	if err := checkLevel(opt); err != nil {
		return nil, "", err
	}
	if err := d.allowsSigning(); err != nil {
		return nil, "", err
	}
	size := opt.ContentsSize
	if size <= 0 {
		size = estimateSize(id, opt.Timestamper != nil)
	}
	value := signatureDict(opt, size)
	if opt.DocMDP != 0 {
		if opt.DocMDP < 1 || opt.DocMDP > 3 || len(before) > 0 {
			return nil, "", fmt.Errorf("pdfsign: DocMDP P=%d: a certification signature has P 1 to 3 and comes first", opt.DocMDP)
		}
		value["Reference"] = docMDPReference(opt.DocMDP)
	}
	u := newUpdate(d)
	sig, err := addSignatureField(u, opt, value)
	if err != nil {
		return nil, "", err
	}
	if opt.DocMDP != 0 {
		if err := certify(u, sig); err != nil {
			return nil, "", err
		}
	}
	w, err := u.write()
	if err != nil {
		return nil, "", err
	}
	sum, contents, err := fillSignature(w, size, func(digest []byte) ([]byte, error) {
		return signCMS(ctx, cmsSigner{key: id.Key, cert: id.Certificate, chain: id.Chain},
			cmsContent{contentType: oidData, digest: digest}, opt.Timestamper)
	})
	if err != nil {
		return nil, "", err
	}
	out, added, err := addLongTerm(ctx, w.pdf, contents, id, opt)
	if err != nil {
		return nil, "", err
	}
	if err := selfCheck(out, len(before)+1+added, opt.Limits); err != nil {
		return nil, "", err
	}
	return out, hex.EncodeToString(sum), nil
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

// addSignatureField adds the signature dictionary, the field+widget that
// holds it, the page's /Annots entry and the form's /Fields entry.
func addSignatureField(u *update, opt Options, value Dict) (Ref, error) {
	pages, err := u.doc.pages()
	if err != nil {
		return Ref{}, err
	}
	i := len(pages) - 1
	if opt.Page > 0 {
		if opt.Page > len(pages) {
			return Ref{}, fmt.Errorf("pdfsign: page %d requested, document has %d", opt.Page, len(pages))
		}
		i = opt.Page - 1
	}
	pg := pages[i]
	sig := u.add(value)
	widget := Dict{
		"Type": Name("Annot"), "Subtype": Name("Widget"), "FT": Name("Sig"),
		"T": textString(fieldName(u.doc)), "V": sig, "P": pg.ref,
		"F":    Int(132), // Print | Locked
		"Rect": Array{Real(opt.Rect[0]), Real(opt.Rect[1]), Real(opt.Rect[2]), Real(opt.Rect[3])},
	}
	if opt.Appearance != nil {
		widget["AP"] = Dict{"N": opt.Appearance}
	}
	w := u.add(widget)
	pd := pg.dict.clone()
	if err := u.appendRef(pd, "Annots", w); err != nil {
		return Ref{}, fmt.Errorf("%w: page %d: %v", ErrUnreadable, i+1, err)
	}
	u.replace(pg.ref, pd)
	return sig, addToForm(u, w)
}

// signatureDict is the signature value with its two placeholders.
func signatureDict(opt Options, size int) Dict {
	t := opt.Time
	if t.IsZero() {
		t = time.Now()
	}
	d := Dict{
		"Type": Name("Sig"), "Filter": Name("Adobe.PPKLite"), "SubFilter": Name("ETSI.CAdES.detached"),
		"ByteRange": byteRangeHole{}, "Contents": contentsHole{size: size},
		"M": String(pdfDate(t)),
	}
	for k, v := range map[Name]string{"Name": opt.Name, "Reason": opt.Reason, "Location": opt.Location, "ContactInfo": opt.ContactInfo} {
		if v != "" {
			d[k] = textString(v)
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
func fieldName(d *document) string {
	used := map[string]bool{}
	_, cat, _ := d.catalog()
	if form, err := d.dict(cat["AcroForm"]); err == nil {
		fields, _ := d.array(form["Fields"])
		for _, f := range fields {
			if fd, err := d.dict(f); err == nil {
				if t, ok := fd["T"].(String); ok {
					used[decodeText(t)] = true
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
func addToForm(u *update, field Ref) error {
	catRef, cat, err := u.doc.catalog()
	if err != nil {
		return err
	}
	if r, ok := cat["AcroForm"].(Ref); ok {
		if form, err := u.doc.dict(r); err == nil {
			f := form.clone()
			if err := extendForm(u, f, field); err != nil {
				return err
			}
			u.replace(r, f)
			return nil
		}
	}
	form := Dict{}
	if f, ok := cat["AcroForm"].(Dict); ok {
		form = f.clone()
	}
	if err := extendForm(u, form, field); err != nil {
		return err
	}
	c := cat.clone()
	c["AcroForm"] = form
	u.replace(catRef, c)
	return nil
}

func extendForm(u *update, form Dict, field Ref) error {
	form["SigFlags"] = Int(intOr(form["SigFlags"], 0) | 3)
	if err := u.appendRef(form, "Fields", field); err != nil {
		return fmt.Errorf("%w: /AcroForm: %v", ErrUnreadable, err)
	}
	return nil
}

// fillSignature writes the /ByteRange, hashes the two ranges, puts what
// sign makes of the hash (a CMS, a time-stamp token) into /Contents, and
// returns the hash and the whole /Contents value. Offsets come from the
// writer's marks, never from searching the output.
func fillSignature(w written, size int, sign func(sha256Digest []byte) ([]byte, error)) (digest, contents []byte, err error) {
	out, m := w.pdf, w.marks
	br := fmt.Sprintf("[0 %d %d %d", m.contentsStart, m.contentsEnd, len(out)-m.contentsEnd)
	if len(br) >= byteRangeWidth {
		return nil, nil, fmt.Errorf("pdfsign: byte range %s] does not fit its placeholder", br)
	}
	copy(out[m.byteRangeAt:], br)
	h := sha256.New()
	h.Write(out[:m.contentsStart])
	h.Write(out[m.contentsEnd:])
	sum := h.Sum(nil)
	cms, err := sign(sum)
	if err != nil {
		return nil, nil, err
	}
	if len(cms) > size {
		return nil, nil, fmt.Errorf("%w: CMS is %d bytes, %d reserved", ErrSignatureTooLarge, len(cms), size)
	}
	hex.Encode(out[m.contentsStart+1:], cms)
	contents = make([]byte, size)
	copy(contents, cms)
	return sum, contents, nil
}

// selfCheck re-reads the signed output: it must parse, hold want
// signatures, and the new one must be intact and cover the whole file.
// It guards against ever handing out a broken file. The output may be
// larger than lim allows the input to be: its own size is accepted.
func selfCheck(pdf []byte, want int, lim Limits) error {
	res, err := verify(pdf, VerifyOptions{}, outputLimits(lim, pdf))
	if err != nil {
		return fmt.Errorf("pdfsign: self-check of the signed output: %w", err)
	}
	if len(res.Signers) != want { // the input's form hides the new field from readers
		return fmt.Errorf("%w: self-check: %d signatures found, %d expected", ErrUnreadable, len(res.Signers), want)
	}
	last := res.Signers[want-1]
	if !last.DigestValid || !last.SignatureValid || !last.CoversWholeDocument {
		return fmt.Errorf("pdfsign: self-check: new signature not valid: %s", last.Reason)
	}
	return nil
}

// outputLimits are lim with room for out, a file this package produced
// from an input that lim admitted, so that re-reading it for a self-check
// does not fail only because an update made it grow.
func outputLimits(lim Limits, out []byte) Limits {
	lim = lim.withDefaults()
	lim.MaxInputSize = max(lim.MaxInputSize, int64(len(out)))
	return lim
}

// catchPanic turns a panic while handling a document into ErrUnreadable:
// hostile input must never take the server down. The error names the
// frames that led to the panic, so that the log shows where it happened.
func catchPanic(err *error) {
	if r := recover(); r != nil {
		*err = errors.Join(ErrUnreadable, fmt.Errorf("pdfsign: internal error: %v [at %s]", r, panicFrames(debug.Stack())))
	}
}

// maxPanicFrames bounds the frames that catchPanic reports.
const maxPanicFrames = 8

// panicFrames condenses a stack trace taken while recovering from a panic
// (the text of runtime/debug.Stack) to one line: "function (file:line)"
// for the innermost frames, joined by " < ", without the frames of the
// runtime and of the recovery itself, without arguments and directories.
func panicFrames(stack []byte) string {
	lines := strings.Split(strings.TrimSpace(string(stack)), "\n")
	var frames []string
	// After the "goroutine N [running]:" line, each frame is a function
	// line followed by an indented "file:line +0xNN" line.
	for i := 1; i+1 < len(lines) && len(frames) < maxPanicFrames; i += 2 {
		fn, loc := strings.TrimSpace(lines[i]), strings.TrimSpace(lines[i+1])
		if strings.HasPrefix(fn, "created by ") {
			break
		}
		if j := strings.LastIndexByte(fn, '('); j > 0 {
			fn = fn[:j]
		}
		fn = fn[strings.LastIndexByte(fn, '/')+1:]
		if fn == "panic" || strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "debug.") ||
			strings.HasSuffix(fn, ".catchPanic") {
			continue
		}
		if j := strings.LastIndex(loc, " +0x"); j > 0 {
			loc = loc[:j]
		}
		loc = loc[strings.LastIndexByte(loc, '/')+1:]
		frames = append(frames, fn+" ("+loc+")")
	}
	if len(frames) == 0 {
		return "unknown location"
	}
	return strings.Join(frames, " < ")
}
