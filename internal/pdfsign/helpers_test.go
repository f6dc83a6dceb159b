package pdfsign

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const corpusDir = "../../../shared/corpus/pdf"

// corpusFiles lists the shared corpus, skipping the test when it is absent.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.pdf"))
	if len(files) == 0 {
		t.Skipf("PDF corpus not found at %s (it lives beside the repository in shared/corpus/pdf)", corpusDir)
	}
	return files
}

// requireTool fails (never skips) when a validator is missing: a green
// run must mean the real tools accepted the output.
func requireTool(t testing.TB, tool, debianPackage string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Fatalf("%s not found: install the Debian package %s (apt-get install %s)", tool, debianPackage, debianPackage)
	}
}

// run runs a command and returns its combined output and exit error.
func run(t testing.TB, name string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// testPDF builds a small valid PDF with n pages, its cross-reference data
// as a classic table or as a compressed xref stream; pad adds about that
// many bytes to the first page's content.
func testPDF(t testing.TB, n int, xrefStream bool, pad int) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := map[int]int{}
	obj := func(num int, body string) {
		offsets[num] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", num, body)
	}
	kids := ""
	for i := 0; i < n; i++ {
		kids += fmt.Sprintf("%d 0 R ", 4+2*i)
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	obj(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d /MediaBox [0 0 595 842] >>", kids, n))
	obj(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i := 0; i < n; i++ {
		content := fmt.Sprintf("BT /F1 24 Tf 72 720 Td (Page %d) Tj ET", i+1)
		obj(4+2*i, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		if i == 0 && pad > 0 {
			// Comment lines: a large but valid content stream.
			content += "\n" + strings.Repeat("%"+strings.Repeat("x", 78)+"\n", pad/80)
		}
		obj(5+2*i, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	}
	size := 4 + 2*n
	xrefAt := b.Len()
	if !xrefStream {
		fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f\r\n", size)
		for i := 1; i < size; i++ {
			fmt.Fprintf(&b, "%010d 00000 n\r\n", offsets[i])
		}
		fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", size, xrefAt)
		return b.Bytes()
	}
	offsets[size] = xrefAt
	var rows bytes.Buffer
	rows.Write([]byte{0, 0, 0, 0, 0xff, 0xff})
	for i := 1; i <= size; i++ {
		o := offsets[i]
		rows.Write([]byte{1, byte(o >> 24), byte(o >> 16), byte(o >> 8), byte(o), 0})
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(rows.Bytes())
	zw.Close()
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 1] /Root 1 0 R /Filter /FlateDecode /Length %d >>\nstream\n",
		size, size+1, z.Len())
	b.Write(z.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xrefAt)
	return b.Bytes()
}

// testIdentity generates (once per directory) a quire identity.
func testIdentity(t testing.TB) *Identity {
	t.Helper()
	id, err := LoadIdentity(KeySource{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// rsaIdentity builds an RSA-3072 CA and signer, stored as PEM files and
// loaded through LoadIdentity like an operator's own key would be.
func rsaIdentity(t testing.TB) *Identity {
	t.Helper()
	caKey, _ := rsa.GenerateKey(rand.Reader, 3072)
	key, _ := rsa.GenerateKey(rand.Reader, 3072)
	now := time.Now().Add(-time.Hour)
	caT := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test RSA CA"},
		NotBefore: now, NotAfter: now.AddDate(1, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caT, caT, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	lT := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "test RSA signer"},
		EmailAddresses: []string{"signer@example.com"}, NotBefore: now, NotAfter: now.AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}
	der, err := x509.CreateCertificate(rand.Reader, lT, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certPEM := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	os.WriteFile(filepath.Join(dir, "c.pem"), certPEM, 0o600)
	os.WriteFile(filepath.Join(dir, "k.pem"), keyPEM, 0o600)
	id, err := LoadIdentity(KeySource{CertFile: filepath.Join(dir, "c.pem"), KeyFile: filepath.Join(dir, "k.pem")})
	if err != nil {
		t.Fatal(err)
	}
	return id
}
