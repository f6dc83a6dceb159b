package pdfsign

import (
	"bytes"
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// The real validators: pdfsig (poppler-utils) with an NSS database that
// trusts the signing CA (certutil, libnss3-tools), qpdf --check (qpdf),
// openssl cms -verify (openssl).
func requireValidators(t *testing.T) {
	pdftest.RequireTool(t, "pdfsig", "poppler-utils")
	pdftest.RequireTool(t, "qpdf", "qpdf")
	pdftest.RequireTool(t, "openssl", "openssl")
	pdftest.RequireTool(t, "certutil", "libnss3-tools")
}

// nssDB creates an NSS database in a temporary directory that trusts the
// identity's root, so pdfsig reports the certificate as trusted.
func nssDB(t *testing.T, id *Identity) string {
	t.Helper()
	dir := t.TempDir()
	root := id.Chain[len(id.Chain)-1]
	ca := writeTemp(t, "ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.Raw}))
	if out, err := run(t, "certutil", "-N", "-d", "sql:"+dir, "--empty-password"); err != nil {
		t.Fatalf("certutil -N: %v\n%s", err, out)
	}
	if out, err := run(t, "certutil", "-A", "-d", "sql:"+dir, "-n", "quire-test-ca", "-t", "CT,C,C", "-i", ca); err != nil {
		t.Fatalf("certutil -A: %v\n%s", err, out)
	}
	return "sql:" + dir
}

// pdfsig runs pdfsig and returns its report.
func pdfsig(t *testing.T, nss string, pdf []byte) string {
	t.Helper()
	out, _ := run(t, "pdfsig", "-nssdir", nss, writeTemp(t, "signed.pdf", pdf))
	return out
}

// qpdfCheck requires qpdf --check to find no errors or warnings.
func qpdfCheck(t *testing.T, pdf []byte) string {
	t.Helper()
	out, err := run(t, "qpdf", "--check", writeTemp(t, "check.pdf", pdf))
	if err != nil || !strings.Contains(out, "No syntax or stream encoding errors found") || strings.Contains(out, "WARNING") {
		t.Fatalf("qpdf --check: %v\n%s", err, out)
	}
	return out
}

// extractCMS returns the CMS of the n-th signature and the bytes it covers.
func extractCMS(t *testing.T, b []byte, n int) (cms, content []byte) {
	t.Helper()
	d, err := pdf.Read(b, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	fields, err := signatureFields(d)
	if err != nil || len(fields) <= n {
		t.Fatalf("signature %d not found: %v", n, err)
	}
	br, err := byteRanges(b, fields[n].value)
	if err != nil {
		t.Fatal(err)
	}
	content = append(append([]byte{}, b[:br[1]]...), b[br[2]:br[2]+br[3]]...)
	return contentsOf(fields[n].value), content
}

// derElement returns the DER element at the start of b, its length taken
// from its header: /Contents is zero-padded and openssl wants exactly the
// DER, which may itself end in zero bytes.
func derElement(t *testing.T, b []byte) []byte {
	t.Helper()
	in := cryptobyte.String(b)
	var el cryptobyte.String
	if !in.ReadASN1Element(&el, cbasn1.SEQUENCE) {
		t.Fatalf("/Contents does not start with a DER SEQUENCE")
	}
	return el
}

func TestDERElementKeepsTrailingZeros(t *testing.T) {
	// A SEQUENCE holding the INTEGER 0 ends in a zero byte, as about one
	// signature in 256 does; the padding after it is not part of it.
	der := []byte{0x30, 0x03, 0x02, 0x01, 0x00}
	if got := derElement(t, append(der, 0, 0, 0, 0)); !bytes.Equal(got, der) {
		t.Fatalf("derElement: % x, want % x", got, der)
	}
}

// opensslVerify checks the CMS with openssl and returns its printed form.
func opensslVerify(t *testing.T, id *Identity, pdf []byte) string {
	t.Helper()
	cms, content := extractCMS(t, pdf, 0)
	sd := derElement(t, cms)
	dir := t.TempDir()
	cmsPath, contentPath, caPath := filepath.Join(dir, "sig.der"), filepath.Join(dir, "content.bin"), filepath.Join(dir, "ca.pem")
	os.WriteFile(cmsPath, sd, 0o600)
	os.WriteFile(contentPath, content, 0o600)
	os.WriteFile(caPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: id.Chain[len(id.Chain)-1].Raw}), 0o600)
	out, err := run(t, "openssl", "cms", "-verify", "-binary", "-inform", "DER", "-in", cmsPath,
		"-content", contentPath, "-CAfile", caPath, "-purpose", "any", "-out", os.DevNull)
	if err != nil || !strings.Contains(out, "Verification successful") {
		t.Fatalf("openssl cms -verify: %v\n%s", err, out)
	}
	printed, err := run(t, "openssl", "cms", "-cmsout", "-print", "-inform", "DER", "-in", cmsPath)
	if err != nil {
		t.Fatalf("openssl cms -print: %v\n%s", err, printed)
	}
	return out + printed
}

func TestValidatorsAcceptSignature(t *testing.T) {
	requireValidators(t)
	ids := map[string]*Identity{"ecdsa-p256": testIdentity(t), "rsa-3072": rsaIdentity(t)}
	for name, id := range ids {
		nss := nssDB(t, id)
		for _, xs := range []bool{false, true} {
			out, _, err := signBytes(context.Background(), pdftest.Generated(1, xs, 0), id, Options{Name: "Jane Doe", Reason: "Approved"})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			report := pdfsig(t, nss, out)
			for _, want := range []string{"Signature is Valid.", "Certificate is Trusted.", "Total document signed"} {
				if !strings.Contains(report, want) {
					t.Fatalf("%s xrefStream=%v: pdfsig lacks %q:\n%s", name, xs, want, report)
				}
			}
			qpdfCheck(t, out)
			printed := opensslVerify(t, id, out)
			if strings.Contains(printed, "signingTime") || !strings.Contains(printed, "signingCertificateV2") {
				t.Fatalf("%s: signed attributes wrong (want signingCertificateV2, no signingTime):\n%s", name, printed)
			}
			if testing.Verbose() {
				t.Logf("%s xrefStream=%v pdfsig:\n%s", name, xs, report)
			}
		}
	}
}

func TestTamperingDetected(t *testing.T) {
	requireValidators(t)
	id := testIdentity(t)
	out, _, err := signBytes(context.Background(), pdftest.Generated(1, false, 0), id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(out, []byte("(Page 1)"))
	out[i+6] = '7' // inside the first signed range
	res, err := Verify(out, id.Roots(), pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid || res.Signers[0].DigestValid {
		t.Fatalf("tampered file verified: %+v", res)
	}
	report := pdfsig(t, nssDB(t, id), out)
	if strings.Contains(report, "Signature is Valid.") || !strings.Contains(report, "Signature is Invalid") && !strings.Contains(report, "Digest Mismatch") {
		t.Fatalf("pdfsig did not report the tampering:\n%s", report)
	}
	t.Logf("Verify: %s; pdfsig:\n%s", res.Reason, report)
}

func TestSignTwiceKeepsBothValid(t *testing.T) {
	requireValidators(t)
	id := testIdentity(t)
	once, _, err := signBytes(context.Background(), pdftest.Generated(1, true, 0), id, Options{Name: "First"})
	if err != nil {
		t.Fatal(err)
	}
	twice, _, err := signBytes(context.Background(), once, id, Options{Name: "Second"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(twice, once) {
		t.Fatal("second signature rewrote the file")
	}
	res, err := Verify(twice, id.Roots(), pdf.Limits{})
	if err != nil || !res.Valid || len(res.Signers) != 2 {
		t.Fatalf("verify: %v %+v", err, res)
	}
	if res.Signers[0].CoversWholeDocument || !res.Signers[1].CoversWholeDocument || res.Signers[0].Name != "First" {
		t.Fatalf("coverage wrong: %+v", res.Signers)
	}
	report := pdfsig(t, nssDB(t, id), twice)
	if strings.Count(report, "Signature is Valid.") != 2 || !strings.Contains(report, "Not total document signed") ||
		!strings.Contains(report, "Total document signed") {
		t.Fatalf("pdfsig:\n%s", report)
	}
	qpdfCheck(t, twice)
	t.Logf("pdfsig:\n%s", report)
}
