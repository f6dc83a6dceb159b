package pdfsign

// Builders of the documents the verifier is tried on: a contract to sign,
// signatures made by third parties (openssl cms, Go's Ed25519), hand-made
// incremental updates and the byte-level attacks of Mladenov et al. (NDSS
// 2019), Mainka et al. (NDSS 2021) and Rohlmann et al. (IEEE S&P 2021).

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// The contract's layout: what the signer reads, and a blank area below.
const (
	contractText = "Pay 100 EUR to Alice"
	textRect     = "[70 695 260 716]" // over the text (Helvetica 14 at 72,700)
	blankRect    = "[72 100 300 124]" // nothing is drawn there
	marginRect   = "[500 40 520 60]"
)

// docSpec describes a contract.
type docSpec struct {
	noteRect string   // the empty text field "Note"; default blankRect
	noteV    string   // its value when signed, "" for none
	extra    []string // objects 7, 8, ... as given
	shadow   string   // a second object 5 (page content) written into the file but not listed: hide-and-replace
}

// contract writes a one-page PDF saying contractText, with a form of one
// text field, Note.
func contract(spec docSpec) []byte {
	if spec.noteRect == "" {
		spec.noteRect = blankRect
	}
	content := "BT /F1 14 Tf 72 700 Td (" + contractText + ") Tj ET"
	note := "<< /Type /Annot /Subtype /Widget /FT /Tx /T (Note) /Rect " + spec.noteRect + " /P 3 0 R /F 4 /DA (/Helv 12 Tf 0 g)"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [6 0 R] /DA (/Helv 0 Tf 0 g) /DR << /Font << /Helv 4 0 R >> >> >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 5 0 R /Resources << /Font << /F1 4 0 R >> >> /Annots [6 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		streamObject(content),
		"",
	}
	objs = append(objs, spec.extra...)
	if spec.noteV != "" { // its appearance is the last object
		objs = append(objs, appearance("1 1 1 rg 0 0 228 24 re f 0 g BT /Helv 12 Tf 2 6 Td ("+spec.noteV+") Tj ET"))
		note += fmt.Sprintf(" /V (%s) /AP << /N %d 0 R >>", spec.noteV, len(objs))
	}
	objs[5] = note + " >>"
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	if spec.shadow != "" {
		fmt.Fprintf(&b, "5 0 obj\n%s\nendobj\n", streamObject(spec.shadow))
	}
	pdftest.XRef(&b, offsets)
	return b.Bytes()
}

// appearance is a form XObject 228 by 24 drawing data with Helvetica as /Helv.
func appearance(data string) string {
	return fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 228 24] /Resources << /Font << /Helv 4 0 R >> >> /Length %d >>\nstream\n%s\nendstream", len(data), data)
}

func streamObject(data string) string {
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(data), data)
}

// trailerOf reads what an update needs of b: its catalog, size and the
// offset of its last cross-reference section.
func trailerOf(t testing.TB, b []byte) (root pdf.Ref, size, prev int) {
	t.Helper()
	d, err := pdf.Read(b, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	root, _ = d.TrailerRef("Root")
	m := regexp.MustCompile(`startxref\s+(\d+)\s+%%EOF\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no startxref at the end")
	}
	prev, _ = strconv.Atoi(string(m[1]))
	return root, d.ObjectCount(), prev
}

// update is what a hand-made incremental update holds.
type update struct {
	objs      map[int]string // objects by number, as written
	noXRef    bool           // leave out the cross-reference section (and the trailer)
	noTrailer bool           // leave out the trailer and startxref
	xrefOnly  map[int]int    // extra entries: object number -> an offset already in the file
}

// appendUpdate writes u after b, as a hand-made or hostile writer would:
// the objects, then (unless left out) a classic cross-reference section
// and a trailer chained to b's.
func appendUpdate(t testing.TB, b []byte, u update) []byte {
	t.Helper()
	root, size, prev := trailerOf(t, b)
	out := bytes.NewBuffer(append([]byte{}, b...))
	offsets := map[int]int{}
	nums := make([]int, 0, len(u.objs))
	for n := range u.objs {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for _, n := range nums {
		offsets[n] = out.Len()
		fmt.Fprintf(out, "%d 0 obj\n%s\nendobj\n", n, u.objs[n])
		size = max(size, n+1)
	}
	for n, off := range u.xrefOnly {
		offsets[n] = off
	}
	if u.noXRef {
		return out.Bytes()
	}
	at := out.Len()
	out.WriteString("xref\n")
	keys := make([]int, 0, len(offsets))
	for n := range offsets {
		keys = append(keys, n)
	}
	slices.Sort(keys)
	for _, n := range keys {
		fmt.Fprintf(out, "%d 1\n%010d 00000 n \n", n, offsets[n])
	}
	if u.noTrailer {
		return out.Bytes()
	}
	fmt.Fprintf(out, "trailer\n<< /Size %d /Root %d 0 R /Prev %d >>\nstartxref\n%d\n%%%%EOF\n", size, root.Num, prev, at)
	return out.Bytes()
}

// objectText returns how object num is written in the newest revision of
// b (its dictionary, for editing in an update).
func objectText(t testing.TB, b []byte, num int) string {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`(?s)\n%d 0 obj\s*(.*?)\s*endobj`, num))
	all := re.FindAllSubmatch(b, -1)
	if len(all) == 0 {
		t.Fatalf("object %d not found", num)
	}
	return string(all[len(all)-1][1])
}

// signatureObject is the number of the first signature dictionary of b.
func signatureObject(t testing.TB, b []byte) int {
	t.Helper()
	d, err := pdf.Read(b, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	fields, err := signatureFields(d)
	if err != nil || len(fields) == 0 {
		t.Fatalf("no signature: %v", err)
	}
	return fields[0].valueRef.Num
}

// foreignSigner makes the CMS of a signature quire did not make, given
// the bytes it covers.
type foreignSigner struct {
	name      string
	subFilter string
	cms       func(t testing.TB, content []byte) []byte
	ber       bool // the CMS is BER (indefinite lengths)
}

// signForeign signs b with fs: the signature field and dictionary as
// quire writes them, the CMS made by fs. certify (1-3) makes it a
// certification signature.
func signForeign(t testing.TB, b []byte, fs foreignSigner, certify int) []byte {
	t.Helper()
	d, err := pdf.Open(context.Background(), b, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := d.Pages()
	if err != nil {
		t.Fatal(err)
	}
	ph := newPlaceholders(16 << 10)
	value := signatureDict(Options{Name: "Third Party", Reason: "Approved", Location: "Lyon", Time: time.Now()}, ph)
	value["SubFilter"] = pdf.Name(fs.subFilter)
	if certify > 0 {
		value["Reference"] = docMDPReference(certify)
	}
	sig, err := addSignatureField(d, pages, Options{Page: 1}, value)
	if err != nil {
		t.Fatal(err)
	}
	if certify > 0 {
		if err := certifyDoc(d, sig); err != nil {
			t.Fatal(err)
		}
	}
	out, err := d.Save()
	if err != nil {
		t.Fatal(err)
	}
	start := ph.contents.Offset()
	end := start + len(ph.contents.Text)
	copy(out[ph.byteRange.Offset():], fmt.Sprintf("[0 %d %d %d", start, end, len(out)-end))
	content := append(append([]byte{}, out[:start]...), out[end:]...)
	cms := fs.cms(t, content)
	if 2*len(cms)+2 > len(ph.contents.Text) {
		t.Fatalf("%s: CMS of %d bytes does not fit", fs.name, len(cms))
	}
	hex.Encode(out[start+1:], cms)
	return out
}

var certifyDoc = certify

// opensslCA is a certificate authority made with openssl, and signers
// under it.
type opensslCA struct {
	dir     string
	caPEM   string // the CA certificate file
	caKey   string
	pool    *x509.CertPool
	signers map[string][2]string // name -> certificate and key files
}

// newOpensslCA makes a CA (RSA 2048) and signers: "rsa", "p256", "p384",
// "p521", and "negative-serial" (an RSA certificate whose serial is
// negative).
func newOpensslCA(t testing.TB) *opensslCA {
	t.Helper()
	pdftest.RequireTool(t, "openssl", "openssl")
	dir := t.TempDir()
	ca := &opensslCA{dir: dir, caPEM: filepath.Join(dir, "ca.pem"), caKey: filepath.Join(dir, "ca.key"), signers: map[string][2]string{}}
	mustRun(t, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca.caKey, "-out", ca.caPEM,
		"-subj", "/CN=Third-Party Test CA", "-days", "30", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
	ext := filepath.Join(dir, "ext.cnf")
	os.WriteFile(ext, []byte("keyUsage=critical,digitalSignature,nonRepudiation\n"), 0o600)
	for name, keyArgs := range map[string][]string{
		"rsa": {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"}, "negative-serial": {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"},
		"p256": {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"}, "p384": {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"},
		"p521": {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-521"},
	} {
		key, csr, cert := filepath.Join(dir, name+".key"), filepath.Join(dir, name+".csr"), filepath.Join(dir, name+".pem")
		mustRun(t, "openssl", append([]string{"genpkey", "-out", key}, keyArgs...)...)
		mustRun(t, "openssl", "req", "-new", "-key", key, "-subj", "/CN=Third-Party "+name+"/emailAddress="+name+"@example.org", "-out", csr)
		serial := "0x" + strconv.FormatInt(time.Now().UnixNano()%1e12, 16)
		if name == "negative-serial" {
			serial = "-0x" + strconv.FormatInt(time.Now().UnixNano()%1e12, 16)
		}
		mustRun(t, "openssl", "x509", "-req", "-in", csr, "-CA", ca.caPEM, "-CAkey", ca.caKey, "-set_serial", serial,
			"-days", "10", "-extfile", ext, "-out", cert)
		ca.signers[name] = [2]string{cert, key}
	}
	pem, _ := os.ReadFile(ca.caPEM)
	ca.pool = x509.NewCertPool()
	ca.pool.AppendCertsFromPEM(pem)
	return ca
}

func mustRun(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := run(t, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// opensslSigner signs with openssl cms -sign as signer name, with extra
// arguments (-md, -keyopt, -cades, -stream); subFilter adbe.pkcs7.sha1
// signs the SHA-1 of the content, encapsulated.
func (ca *opensslCA) signer(name, subFilter string, args ...string) foreignSigner {
	fs := foreignSigner{name: name + " " + strings.Join(args, " "), subFilter: subFilter, ber: slices.Contains(args, "-stream")}
	fs.cms = func(t testing.TB, content []byte) []byte {
		dir := t.TempDir()
		in, out := filepath.Join(dir, "content"), filepath.Join(dir, "sig.der")
		if subFilter == "adbe.pkcs7.sha1" {
			sum := sha1.Sum(content)
			content = sum[:]
			args = append(args, "-nodetach")
		}
		os.WriteFile(in, content, 0o600)
		mustRun(t, "openssl", append([]string{"cms", "-sign", "-binary", "-in", in, "-signer", ca.signers[name][0], "-inkey", ca.signers[name][1],
			"-certfile", ca.caPEM, "-outform", "DER", "-out", out}, args...)...)
		der, _ := os.ReadFile(out)
		if fs.ber && subFilter != "adbe.pkcs7.sha1" {
			der = detachBER(t, der)
		}
		return der
	}
	return fs
}

// detachBER takes the encapsulated content out of an indefinite-length
// SignedData (openssl cms -stream always encapsulates it): with
// indefinite lengths around it, nothing else needs rewriting.
func detachBER(t testing.TB, der []byte) []byte {
	t.Helper()
	// ContentInfo, [0], SignedData, version, digestAlgorithms, then
	// encapContentInfo SEQUENCE(indefinite) { OID, [0] eContent }.
	oid := []byte{0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01}
	i := bytes.Index(der, oid)
	if i < 2 || der[i-2] != 0x30 || der[i-1] != 0x80 || der[i+len(oid)] != 0xa0 {
		t.Fatalf("openssl's CMS is not indefinite-length around its content: % x", der[:min(len(der), 48)])
	}
	start := i + len(oid)
	_, n, err := berElement(der[start:], 0)
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]byte{}, der[:start]...), der[start+n:]...)
}

// goSigner makes CMS SignedData with quire's own builder and the key and
// attributes given: an Ed25519 key (which openssl 3.0's cms cannot sign
// with) or attributes repeated.
func goSigner(name string, key crypto.Signer, cert *x509.Certificate, extra func(attrs [][]byte) [][]byte) foreignSigner {
	return foreignSigner{name: name, subFilter: "ETSI.CAdES.detached", cms: func(t testing.TB, content []byte) []byte {
		sum := sha256.Sum256(content)
		attrs := extra(signedAttributes(cert, cmsContent{contentType: oidData, digest: sum[:]}))
		toSign := derSet(attrs)
		var sig, alg []byte
		var err error
		if k, ok := key.(ed25519.PrivateKey); ok {
			sig = ed25519.Sign(k, toSign)
			alg = derOf(func(b *cryptobyte.Builder) {
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { b.AddASN1ObjectIdentifier([]int{1, 3, 101, 112}) })
			})
		} else {
			h := sha256.Sum256(toSign)
			if sig, err = key.Sign(rand.Reader, h[:], crypto.SHA256); err != nil {
				t.Fatal(err)
			}
			if alg, err = signatureAlgorithm(key.Public()); err != nil {
				t.Fatal(err)
			}
		}
		cms, err := assembleSignedData(cmsSigner{key: key, cert: cert}, cmsContent{contentType: oidData, digest: sum[:]}, attrs, alg, sig, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cms
	}}
}

// pemFile writes certificates to a PEM file.
func pemFile(t testing.TB, certs ...*x509.Certificate) string {
	t.Helper()
	var b []byte
	for _, c := range certs {
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return writeTemp(t, "trust.pem", b)
}

// opensslTSA is a time-stamp authority made with openssl ts and a
// self-signed certificate: an authority nobody trusts.
type opensslTSA struct {
	dir, cert, key, config string
	t                      testing.TB
}

func newOpensslTSA(t testing.TB, name string) *opensslTSA {
	t.Helper()
	dir := t.TempDir()
	a := &opensslTSA{dir: dir, cert: filepath.Join(dir, "tsa.pem"), key: filepath.Join(dir, "tsa.key"), config: filepath.Join(dir, "ts.cnf"), t: t}
	mustRun(t, "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", a.key, "-out", a.cert,
		"-subj", "/CN="+name, "-days", "30", "-addext", "extendedKeyUsage=critical,timeStamping", "-addext", "keyUsage=critical,digitalSignature")
	os.WriteFile(filepath.Join(dir, "serial"), []byte("01\n"), 0o600)
	os.WriteFile(a.config, []byte(fmt.Sprintf(`[ tsa ]
default_tsa = tsa1
[ tsa1 ]
serial = %s/serial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256
accuracy = secs:1
ess_cert_id_alg = sha256
`, dir)), 0o600)
	return a
}

// Timestamp implements Timestamper with openssl ts -query and -reply.
func (a *opensslTSA) Timestamp(_ context.Context, digest []byte) ([]byte, error) {
	q, tok := filepath.Join(a.dir, "q.tsq"), filepath.Join(a.dir, "tok.der")
	mustRun(a.t, "openssl", "ts", "-query", "-digest", hex.EncodeToString(digest), "-sha256", "-cert", "-out", q)
	mustRun(a.t, "openssl", "ts", "-reply", "-queryfile", q, "-inkey", a.key, "-signer", a.cert, "-config", a.config, "-token_out", "-out", tok)
	return os.ReadFile(tok)
}

// loadPair reads a certificate and private key (PKCS#8) from PEM files.
func loadPair(t testing.TB, files [2]string) (*x509.Certificate, crypto.Signer) {
	t.Helper()
	cb, _ := os.ReadFile(files[0])
	kb, _ := os.ReadFile(files[1])
	cblock, _ := pem.Decode(cb)
	kblock, _ := pem.Decode(kb)
	if cblock == nil || kblock == nil {
		t.Fatalf("%v: not PEM", files)
	}
	cert, err := x509.ParseCertificate(cblock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.ParsePKCS8PrivateKey(kblock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key.(crypto.Signer)
}

// ed25519Pair makes an Ed25519 signer certificate under the openssl CA.
func ed25519Pair(t testing.TB, ca *opensslCA) (*x509.Certificate, ed25519.PrivateKey) {
	t.Helper()
	caCert, caKey := loadPair(t, [2]string{ca.caPEM, ca.caKey})
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	now := time.Now().Add(-time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "Third-Party ed25519"},
		NotBefore: now, NotAfter: now.AddDate(0, 0, 10), KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}, caCert, pub, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}
