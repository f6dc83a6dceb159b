package pdfsign

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// signer makes the signed documents the attacks start from: quire's own
// signature and a third party's (openssl cms, adbe.pkcs7.detached), and
// the trust anchors that make both trusted.
type signerSet struct {
	id    *Identity
	ca    *opensslCA
	tsa   *pdftest.TSA
	opts  VerifyOptions
	files []namedFile // every document verified, for the comparison with EU DSS
}

// namedFile is a signed document a test made.
type namedFile struct {
	name string
	pdf  []byte
}

func newSignerSet(t *testing.T) *signerSet {
	t.Helper()
	s := &signerSet{id: testIdentity(t), ca: newOpensslCA(t), tsa: pdftest.NewTSA(t)}
	roots := s.ca.pool.Clone()
	roots.AddCert(s.id.Root())
	s.opts = VerifyOptions{Roots: roots, TSARoots: s.tsa.Roots()}
	return s
}

// signed is one signed document.
type signed struct {
	by  string // "quire" or "openssl"
	pdf []byte
}

// sign signs in with quire and with openssl, certified at level certify
// when it is not 0.
func (s *signerSet) sign(t *testing.T, in []byte, certify int) []signed {
	t.Helper()
	q, _, err := signBytes(context.Background(), in, s.id, Options{Name: "Alice Signer", Reason: "I agree", DocMDP: certify})
	if err != nil {
		t.Fatal(err)
	}
	o := signForeign(t, in, s.ca.signer("rsa", "adbe.pkcs7.detached"), certify)
	return []signed{{"quire", q}, {"openssl", o}}
}

// verified verifies b and requires the first signature to have been
// intact before the attack, and the document not valid after it.
func (s *signerSet) refused(t *testing.T, name string, b []byte) Result {
	t.Helper()
	s.files = append(s.files, namedFile{name, b})
	res, err := VerifyWith(b, s.opts, pdf.Limits{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.Valid {
		t.Fatalf("%s: the attack is called valid: %+v", name, res)
	}
	if len(res.Signers) == 0 || res.Signers[0].Valid || res.Signers[0].Indication != TotalFailed {
		t.Fatalf("%s: the attacked signature is not TOTAL_FAILED: %+v", name, res.Signers)
	}
	return res
}

// forbidden requires the first signature's modifications to hold a change
// of class that is not permitted, and returns it.
func forbidden(t *testing.T, name string, res Result, class string) Change {
	t.Helper()
	for _, ch := range res.Signers[0].Modifications.Changes {
		if ch.Class == class && !ch.Permitted {
			if sub := res.Signers[0].SubIndication; sub == nil || *sub != subFormat {
				t.Fatalf("%s: sub-indication %v, want FORMAT_FAILURE", name, sub)
			}
			return ch
		}
	}
	t.Fatalf("%s: no forbidden change of class %q: %+v (%s)", name, class, res.Signers[0].Modifications, res.Signers[0].Reason)
	return Change{}
}

// edit opens a signed file, lets fn change it with quire's own model, and
// saves the changes as an incremental update.
func edit(t *testing.T, b []byte, fn func(d *pdf.Document)) []byte {
	t.Helper()
	d, err := pdf.Open(context.Background(), b, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	fn(d)
	out, err := d.Save()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// malicious is the page content an attacker wants shown.
const malicious = "BT /F1 14 Tf 72 700 Td (Pay 9999 EUR to Mallory) Tj ET"

// overlay is an appearance that covers the signed text and writes another.
func overlay() *pdf.Stream {
	data := "1 1 1 rg 0 0 228 24 re f 0 g BT /Helv 14 Tf 2 5 Td (Pay 9999 EUR to Mallory) Tj ET"
	return &pdf.Stream{Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Form"), "BBox": pdf.Array{pdf.Int(0), pdf.Int(0), pdf.Int(228), pdf.Int(24)},
		"Resources": pdf.Dict{"Font": pdf.Dict{"Helv": pdf.Ref{Num: 4}}}}, Data: []byte(data)}
}

func rect(s string) pdf.Array {
	var a pdf.Array
	for _, f := range strings.Fields(strings.Trim(s, "[]")) {
		var v float64
		fmt.Sscan(f, &v)
		a = append(a, pdf.Real(v))
	}
	return a
}

// addAnnotation puts annot on page 1 of d and returns its reference.
func addAnnotation(t *testing.T, d *pdf.Document, annot pdf.Dict) pdf.Ref {
	t.Helper()
	pages, _ := d.Pages()
	ref := d.Add(annot)
	p := pages[0].Dict.Clone()
	if err := d.AppendRef(p, "Annots", ref); err != nil {
		t.Fatal(err)
	}
	d.Replace(pages[0].Ref, p)
	return ref
}

// fillNote fills the Note field with value, drawn by ap.
func fillNote(t *testing.T, d *pdf.Document, value string, ap *pdf.Stream) {
	t.Helper()
	note, err := d.Dict(pdf.Ref{Num: 6})
	if err != nil {
		t.Fatal(err)
	}
	n := note.Clone()
	n["V"], n["AP"] = pdf.String(value), pdf.Dict{"N": ap}
	d.Replace(pdf.Ref{Num: 6}, n)
}

// TestAttacksAreRefused builds every published attack class on a PDF
// signed by quire and on one signed by openssl, and requires each to be
// refused, naming its class of change.
func TestAttacksAreRefused(t *testing.T) {
	newSignerSet(t).attacks(t)
}

func (s *signerSet) attacks(t *testing.T) {
	for _, base := range s.sign(t, contract(docSpec{}), 0) {
		t.Run(base.by, func(t *testing.T) {
			s.universalForgery(t, base.pdf)
			s.incrementalSaving(t, base.pdf)
			s.signatureWrapping(t, base.pdf)
			s.signedMetadataReplaced(t, base.pdf)
			s.untrustedDocTimestamp(t, base.pdf)
		})
	}
	for name, spec := range map[string]docSpec{"hide": {noteRect: textRect}, "replace": {noteRect: textRect, noteV: contractText}, "hide-and-replace": {shadow: malicious}} {
		for _, base := range s.sign(t, contract(spec), 0) {
			t.Run("shadow "+name+" "+base.by, func(t *testing.T) { s.shadow(t, name, base.pdf, contract(spec)) })
		}
	}
	for _, p := range []int{2, 3} {
		for _, base := range s.sign(t, contract(docSpec{}), p) {
			t.Run(fmt.Sprintf("certified P=%d %s", p, base.by), func(t *testing.T) { s.certified(t, p, base.pdf) })
		}
	}
}

// universalForgery: the signature dictionary replaced by one whose
// /ByteRange is missing, zero or overlapping, or whose /Contents is empty
// or null, with the page changed (Mladenov et al., USF).
func (s *signerSet) universalForgery(t *testing.T, b []byte) {
	num := signatureObject(t, b)
	dict := objectText(t, b, num)
	br := regexp.MustCompile(`/ByteRange\s*\[[^\]]*\]`)
	ct := regexp.MustCompile(`/Contents\s*<[0-9a-fA-F]*>`)
	for name, forged := range map[string]string{
		"ByteRange missing":     br.ReplaceAllString(dict, ""),
		"ByteRange zero":        br.ReplaceAllString(dict, "/ByteRange [0 0 0 0]"),
		"ByteRange overlapping": br.ReplaceAllString(dict, fmt.Sprintf("/ByteRange [0 %d 0 %d]", len(b), len(b))),
		"Contents empty":        ct.ReplaceAllString(dict, "/Contents <>"),
		"Contents null":         ct.ReplaceAllString(dict, "/Contents null"),
	} {
		out := appendUpdate(t, b, update{objs: map[int]string{num: forged, 5: streamObject(malicious)}})
		res := s.refused(t, "USF "+name, out)
		if sub := res.Signers[0].SubIndication; *sub != subFormat || !strings.Contains(res.Signers[0].Reason, "ByteRange") && !strings.Contains(res.Signers[0].Reason, "CMS") {
			t.Errorf("USF %s: %s %s", name, *sub, res.Signers[0].Reason)
		}
	}
}

// incrementalSaving: new page content appended with a new cross-reference
// section and trailer, without the trailer, and as a bare body
// (Mladenov et al., ISA).
func (s *signerSet) incrementalSaving(t *testing.T, b []byte) {
	body := map[int]string{5: streamObject(malicious)}
	for name, u := range map[string]update{"body, xref and trailer": {objs: body}, "body and xref, no trailer": {objs: body, noTrailer: true},
		"body only": {objs: body, noXRef: true}} {
		res := s.refused(t, "ISA "+name, appendUpdate(t, b, u))
		ch := forbidden(t, "ISA "+name, res, ClassOther)
		t.Logf("ISA %s: %s", name, describeChange(ch))
	}
	// A body too long for the last startxref to be found near the end.
	long := map[int]string{5: streamObject(malicious + "\n%" + strings.Repeat("x", 5000))}
	res := s.refused(t, "ISA long body, xref, no trailer", appendUpdate(t, b, update{objs: long, noTrailer: true}))
	forbidden(t, "ISA long body", res, ClassOther)
}

// signatureWrapping: the second signed range moved to the end of the file,
// the attacker's objects inserted after /Contents, /ByteRange pointed at
// the moved range, and a cross-reference section for the new layout
// (Mladenov et al., SWA).
func (s *signerSet) signatureWrapping(t *testing.T, b []byte) {
	d, _ := pdf.Read(b, pdf.Limits{})
	fields, _ := signatureFields(d)
	br, err := byteRanges(b, fields[0].value)
	if err != nil {
		t.Fatal(err)
	}
	p1, gap, p2 := b[:br[1]], b[br[1]:br[2]], b[br[2]:]
	// The signature dictionary is closed after /Contents (what followed it
	// now follows the inserted objects, where readers skip it).
	sub, _ := nameOf(fields[0].value["SubFilter"])
	inserted := []byte(" /Filter /Adobe.PPKLite /SubFilter /" + sub + " >>\nendobj\n5 0 obj\n" + streamObject(malicious) + "\nendobj\n")
	shift := len(inserted)
	var out bytes.Buffer
	out.Write(p1)
	out.Write(gap)
	at5 := out.Len() + bytes.Index(inserted, []byte("5 0 obj"))
	out.Write(inserted)
	out.Write(p2)
	moved := map[int]int{5: at5}
	for _, m := range regexp.MustCompile(`\n(\d+) 0 obj`).FindAllSubmatchIndex(p2, -1) {
		var n int
		fmt.Sscan(string(p2[m[2]:m[3]]), &n)
		if n != 5 {
			moved[n] = br[2] + shift + m[0] + 1
		}
	}
	wrapped := out.Bytes()
	newRange := fmt.Sprintf("[0 %d %d %d]", br[1], br[2]+shift, br[3])
	old := regexp.MustCompile(`/ByteRange\s*\[[^\]]*\]`).FindIndex(p1)
	copy(wrapped[old[0]:], "/ByteRange "+newRange+strings.Repeat(" ", old[1]-old[0]-len("/ByteRange "+newRange)))
	prevXRef := regexp.MustCompile(`startxref\s+(\d+)`).FindAllSubmatch(p2, -1)
	var prev int
	fmt.Sscan(string(prevXRef[len(prevXRef)-1][1]), &prev)
	root, size, _ := trailerOf(t, b)
	var x bytes.Buffer
	x.Write(wrapped)
	xAt := x.Len()
	x.WriteString("xref\n")
	for n, off := range moved {
		fmt.Fprintf(&x, "%d 1\n%010d 00000 n \n", n, off)
	}
	fmt.Fprintf(&x, "trailer\n<< /Size %d /Root %d 0 R /Prev %d >>\nstartxref\n%d\n%%%%EOF\n", size, root.Num, prev+shift, xAt)
	res := s.refused(t, "SWA", x.Bytes())
	if r := res.Signers[0].Reason; !strings.Contains(r, "ByteRange") {
		t.Errorf("SWA: %s", r)
	}
}

// signedMetadataReplaced: the signature dictionary written again with
// another reason, location and time, its /ByteRange and /Contents kept.
func (s *signerSet) signedMetadataReplaced(t *testing.T, b []byte) {
	num := signatureObject(t, b)
	dict := objectText(t, b, num)
	dict = regexp.MustCompile(`/Reason\s*\([^)]*\)`).ReplaceAllString(dict, "/Reason (Approved the 9999 EUR payment)")
	dict = regexp.MustCompile(`/M\s*\([^)]*\)`).ReplaceAllString(dict, "/M (D:20200101000000Z)")
	res := s.refused(t, "signed metadata replaced", appendUpdate(t, b, update{objs: map[int]string{num: dict}}))
	forbidden(t, "signed metadata replaced", res, ClassOther)
	sr := res.Signers[0]
	if sr.SignReason == "Approved the 9999 EUR payment" || sr.SigningTime == nil || sr.SigningTime.Year() == 2020 ||
		!strings.Contains(strings.Join(sr.ChangedAfterSigning, ","), "Reason") || !strings.Contains(strings.Join(sr.ChangedAfterSigning, ","), "M") {
		t.Errorf("signed metadata replaced: shown %q at %v, changed %v", sr.SignReason, sr.SigningTime, sr.ChangedAfterSigning)
	}
}

// untrustedDocTimestamp: the page changed, then a document time-stamp by
// a self-made authority over everything; and an unsigned document with
// only such a time-stamp.
func (s *signerSet) untrustedDocTimestamp(t *testing.T, b []byte) {
	mallory := newOpensslTSA(t, "Mallory Self-Made TSA")
	changed := appendUpdate(t, b, update{objs: map[int]string{5: streamObject(malicious)}})
	stamped, err := appendDocTimestamp(context.Background(), changed, mallory, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res := s.refused(t, "doc time-stamp from an unknown authority", stamped)
	forbidden(t, "doc time-stamp from an unknown authority", res, ClassOther)
	ts := res.Signers[len(res.Signers)-1]
	if ts.SubFilter != "ETSI.RFC3161" || ts.TimestampTrusted || ts.Valid || ts.Indication != Indeterminate || ts.CommonName != "Mallory Self-Made TSA" {
		t.Errorf("Mallory's time-stamp: %+v", ts)
	}
	alone, err := appendDocTimestamp(context.Background(), contract(docSpec{}), mallory, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res, err = VerifyWith(alone, s.opts, pdf.Limits{})
	if err != nil || res.Valid || !strings.Contains(res.Reason, "no signatures") {
		t.Errorf("a time-stamp alone: %v %+v", err, res)
	}
}

// shadow runs the shadow attacks of Mainka et al. on b, signed from
// unsigned (which holds what the attacker prepared).
func (s *signerSet) shadow(t *testing.T, name string, b, unsigned []byte) {
	var out []byte
	class := ClassForm
	switch name {
	case "hide": // an empty field over the text, filled with an opaque overlay
		out = edit(t, b, func(d *pdf.Document) { fillNote(t, d, "Pay 9999 EUR to Mallory", overlay()) })
	case "replace": // a field whose signed value is shown, changed; and the page's font replaced
		out = edit(t, b, func(d *pdf.Document) { fillNote(t, d, "Pay 9999 EUR to Mallory", overlay()) })
		font := appendUpdate(t, b, update{objs: map[int]string{4: "<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding << /Differences [49 /nine /nine /nine /nine] >> >>"}})
		forbidden(t, "shadow replace (font)", s.refused(t, "shadow replace (font)", font), ClassOther)
	case "hide-and-replace": // the page content pointed at a shadow stream already in the signed bytes
		i := bytes.LastIndex(unsigned, []byte("\n5 0 obj")) + 1
		out = appendUpdate(t, b, update{objs: map[int]string{}, xrefOnly: map[int]int{5: i}})
		class = ClassOther
	}
	res := s.refused(t, "shadow "+name, out)
	ch := forbidden(t, "shadow "+name, res, class)
	t.Logf("shadow %s: %s", name, describeChange(ch))
}

// certified runs the attacks on certified documents of Rohlmann et al.:
// an evil annotation over the text, and a sneaky signature whose visible
// appearance covers it.
func (s *signerSet) certified(t *testing.T, p int, b []byte) {
	evil := edit(t, b, func(d *pdf.Document) {
		addAnnotation(t, d, pdf.Dict{"Type": pdf.Name("Annot"), "Subtype": pdf.Name("FreeText"), "Rect": rect(textRect),
			"Contents": pdf.String("Pay 9999 EUR to Mallory"), "DA": pdf.String("/Helv 14 Tf 0 g"), "AP": pdf.Dict{"N": overlay()}})
	})
	forbidden(t, "evil annotation", s.refused(t, "evil annotation", evil), ClassAnnotations)
	mallory := testIdentity(t)
	sneaky, _, err := signBytes(context.Background(), b, mallory, Options{Name: "Mallory", Page: 1, Rect: [4]float64{70, 695, 298, 719}, Appearance: overlay()})
	if err != nil {
		t.Fatal(err)
	}
	forbidden(t, "sneaky signature", s.refused(t, "sneaky signature", sneaky), ClassSignature)
}

// TestPermittedChangesStayValid: a form filled after a P=2 certification,
// an annotation after P=3, LTV data and an archive time-stamp added by
// quire, and a second signature keep the document valid.
func TestPermittedChangesStayValid(t *testing.T) {
	s := newSignerSet(t)
	s.permitted(t)
}

// valid requires b to be valid, its first signature followed by changes
// of class level at most, all permitted.
func (s *signerSet) valid(t *testing.T, name string, b []byte, level string) Result {
	t.Helper()
	s.files = append(s.files, namedFile{name, b})
	res, err := VerifyWith(b, s.opts, pdf.Limits{})
	if err != nil || !res.Valid || res.Signers[0].Modifications.Level != level || !res.Signers[0].Modifications.Permitted {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
	return res
}

func (s *signerSet) permitted(t *testing.T) {
	valid := func(name string, b []byte, level string) Result { t.Helper(); return s.valid(t, name, b, level) }
	for _, base := range s.sign(t, contract(docSpec{}), 2) {
		filled := edit(t, base.pdf, func(d *pdf.Document) {
			fillNote(t, d, "Delivered on time", &pdf.Stream{Dict: overlay().Dict, Data: []byte("BT /Helv 12 Tf 2 6 Td (Delivered on time) Tj ET")})
		})
		valid("form filled after P=2 "+base.by, filled, ClassForm)
		second, _, err := signBytes(context.Background(), filled, s.id, Options{Name: "Bob"})
		if err != nil {
			t.Fatal(err)
		}
		res := valid("second signature after P=2 "+base.by, second, ClassSignature)
		if !res.Signers[1].Valid || res.Signers[1].Modifications.Level != ClassNone {
			t.Fatalf("second signature: %+v", res.Signers[1])
		}
	}
	for _, base := range s.sign(t, contract(docSpec{}), 3) {
		noted := edit(t, base.pdf, func(d *pdf.Document) {
			addAnnotation(t, d, pdf.Dict{"Type": pdf.Name("Annot"), "Subtype": pdf.Name("Text"), "Rect": rect(marginRect), "Contents": pdf.String("Checked")})
		})
		valid("annotation after P=3 "+base.by, noted, ClassAnnotations)
	}
	lta, _, err := signBytes(context.Background(), contract(docSpec{}), s.id, Options{Timestamper: &TSAClient{URL: s.tsa.URL}, Level: LevelLTA, Fetch: fetchHTTP})
	if err != nil {
		t.Fatal(err)
	}
	res := valid("LTV and archive time-stamp by quire", lta, ClassLTV)
	if l := res.Signers[0].Level; l == nil || *l != "PAdES-BASELINE-LTA" || res.Signers[0].Revocation.Where != "dss" || res.Signers[0].Revocation.CRL != 2 {
		t.Errorf("LTA level %v, revocation %+v", l, res.Signers[0].Revocation)
	}
	for _, base := range s.sign(t, contract(docSpec{}), 0) {
		twice, _, err := signBytes(context.Background(), base.pdf, s.id, Options{Name: "Bob"})
		if err != nil {
			t.Fatal(err)
		}
		valid("second signature "+base.by, twice, ClassSignature)
	}
}

// TestForeignFormatsVerify: signatures made by openssl cms (BER, PSS,
// ECDSA P-256/384/521, SHA-3, CAdES, adbe.pkcs7.sha1, a negative serial)
// and by Go's Ed25519 (openssl 3.0's cms cannot sign with it), and
// attributes repeated, as the reference validators read them.
func TestForeignFormatsVerify(t *testing.T) {
	newSignerSet(t).foreign(t)
}

func (s *signerSet) foreign(t *testing.T) {
	ca := s.ca
	rsaCert, rsaKey := loadPair(t, ca.signers["rsa"])
	edCert, edKey := ed25519Pair(t, ca)
	for _, c := range []struct {
		fs                foreignSigner
		valid             bool
		indication, level string
	}{
		{ca.signer("rsa", "adbe.pkcs7.detached", "-stream"), true, Indeterminate, "PKCS7-B"},
		{ca.signer("rsa", "adbe.pkcs7.detached", "-keyopt", "rsa_padding_mode:pss"), true, Indeterminate, "PKCS7-B"},
		// openssl's -cades adds a CMS signing-time, which PAdES baseline forbids: no level
		{ca.signer("p256", "ETSI.CAdES.detached", "-cades", "-md", "sha256"), true, Indeterminate, "null"},
		{ca.signer("p384", "ETSI.CAdES.detached", "-cades", "-md", "sha384"), true, Indeterminate, "null"},
		{ca.signer("p521", "adbe.pkcs7.detached", "-md", "sha512"), true, Indeterminate, "PKCS7-B"},
		{ca.signer("rsa", "adbe.pkcs7.detached", "-md", "sha3-256"), true, Indeterminate, "PKCS7-B"},
		{ca.signer("negative-serial", "adbe.pkcs7.detached"), true, Indeterminate, "PKCS7-B"},
		{ca.signer("rsa", "adbe.pkcs7.sha1"), false, Indeterminate, "PKCS7-B"},
		{goSigner("ed25519", edKey, edCert, func(a [][]byte) [][]byte { return a }), true, Indeterminate, "PAdES-BASELINE-B"},
		{goSigner("signing-certificate twice", rsaKey, rsaCert, func(a [][]byte) [][]byte { return append(a, a[2]) }), true, Indeterminate, "null"},
		{goSigner("message-digest twice", rsaKey, rsaCert, func(a [][]byte) [][]byte { return append(a, a[1]) }), false, TotalFailed, "null"},
	} {
		b := signForeign(t, contract(docSpec{}), c.fs, 0)
		s.files = append(s.files, namedFile{c.fs.name, b})
		res, err := VerifyWith(b, s.opts, pdf.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", c.fs.name, err)
		}
		sr := res.Signers[0]
		if sr.Valid != c.valid || res.Valid != c.valid || sr.Indication != c.indication || deref(sr.Level) != c.level {
			t.Errorf("%s: valid %v, %s %v, level %v: %s", c.fs.name, sr.Valid, sr.Indication, deref(sr.SubIndication), deref(sr.Level), sr.Reason)
			continue
		}
		if c.valid && (!sr.DigestValid || !sr.SignatureValid || !sr.Trusted) {
			t.Errorf("%s: %+v", c.fs.name, sr)
		}
		t.Logf("%s: %s %s %s (%s)", c.fs.name, deref(sr.Level), sr.Indication, deref(sr.SubIndication), sr.Reason)
	}
}

// fetchHTTP downloads a URL, as the signing service's fetcher does.
func fetchHTTP(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// TestQuireSignedTwiceWithCertificatePage: the signing service appends a
// certificate page with each signing; a page added after a signature is
// a forbidden change (the reference validators fail it too).
func TestPageAddedAfterSignatureFails(t *testing.T) {
	s := newSignerSet(t)
	once, _, err := signBytes(context.Background(), contract(docSpec{}), s.id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	withPage, err := appendPages(context.Background(), once, []pdf.Page{{MediaBox: [4]float64{0, 0, 595, 842}, Content: []byte("BT /F1 12 Tf 72 700 Td (Certificate) Tj ET")}})
	if err != nil {
		t.Fatal(err)
	}
	twice, _, err := signBytes(context.Background(), withPage, s.id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := s.refused(t, "page added", twice)
	ch := forbidden(t, "page added", res, ClassOther)
	if !res.Signers[1].Valid || !strings.Contains(res.Reason, "page") {
		t.Errorf("second signature %+v; reason %q; change %+v", res.Signers[1], res.Reason, ch)
	}
}

// TestRevisionsAreCharged: each earlier revision read is told to the
// caller's budget, whose refusal ends the verification.
func TestRevisionsAreCharged(t *testing.T) {
	s := newSignerSet(t)
	twice, _, err := signBytes(context.Background(), s.sign(t, contract(docSpec{}), 0)[0].pdf, s.id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var charged []int
	opts := s.opts
	opts.AdmitRevision = func(objects int) error { charged = append(charged, objects); return nil }
	if res, err := VerifyWith(twice, opts, pdf.Limits{}); err != nil || !res.Valid || len(charged) == 0 {
		t.Fatalf("%v %+v, charged %v", err, res, charged)
	}
	full := errors.New("budget spent")
	opts.AdmitRevision = func(int) error { return full }
	if _, err := VerifyWith(twice, opts, pdf.Limits{}); !errors.Is(err, full) {
		t.Fatalf("a refused revision: %v", err)
	}
}

// TestEncryptedSignedPDFs: a contract encrypted by qpdf (empty user
// password; AES-256, AES-128, RC4-128) and signed by poppler's pdfsig as
// a third party, as its own reader decrypts it: quire reads it decrypted
// and verifies the signature.
func TestEncryptedSignedPDFs(t *testing.T) {
	pdftest.RequireTool(t, "qpdf", "qpdf")
	pdftest.RequireTool(t, "pdfsig", "poppler-utils")
	pdftest.RequireTool(t, "pk12util", "libnss3-tools")
	s := newSignerSet(t)
	dir := t.TempDir()
	nss := "sql:" + dir
	mustRun(t, "certutil", "-N", "-d", nss, "--empty-password")
	p12 := filepath.Join(dir, "signer.p12")
	mustRun(t, "openssl", "pkcs12", "-export", "-inkey", s.ca.signers["rsa"][1], "-in", s.ca.signers["rsa"][0], "-certfile", s.ca.caPEM,
		"-passout", "pass:", "-name", "signer", "-out", p12)
	mustRun(t, "pk12util", "-i", p12, "-d", nss, "-W", "")
	// A document without a form: poppler 22.12 adds the field of a new
	// signature to the page but not to an existing form's /Fields.
	plain := writeTemp(t, "plain.pdf", pdftest.OnePage(contractText))
	for _, enc := range [][]string{{"256"}, {"128", "--use-aes=y"}, {"128", "--use-aes=n"}} {
		encrypted, signed := filepath.Join(dir, "enc.pdf"), filepath.Join(dir, "signed.pdf")
		os.Remove(signed)
		mustRun(t, "qpdf", append(append([]string{"--allow-weak-crypto", "--encrypt", "", "owner"}, enc...), "--", plain, encrypted)...)
		mustRun(t, "pdfsig", "-nssdir", nss, "-add-signature", "-nick", "signer", "-upw", "", "-reason", "Encrypted and signed", encrypted, signed)
		b, err := os.ReadFile(signed)
		if err != nil {
			t.Fatal(err)
		}
		res, err := VerifyWith(b, s.opts, pdf.Limits{})
		if err != nil {
			t.Fatalf("encryption %v: %v", enc, err)
		}
		if len(res.Signers) == 0 {
			i := bytes.LastIndex(b, []byte("%%EOF"))
			j := bytes.LastIndex(b[:i], []byte("%%EOF"))
			out, _ := run(t, "pdfsig", "-nssdir", nss, "-upw", "", signed)
			t.Fatalf("encryption %v: no signature found; pdfsig:\n%s\nthe update:\n%q", enc, out, b[j:min(len(b), j+600)])
		}
		sr := res.Signers[0]
		if !res.Valid || !sr.DigestValid || !sr.SignatureValid || !sr.Trusted || sr.SignReason != "Encrypted and signed" || sr.Modifications.Level != ClassNone {
			t.Fatalf("encryption %v: %+v", enc, res)
		}
	}
}
