package signing

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdf/pdftest/pdfcheck"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestSignedOutputConforms signs generated inputs of every structure the
// service meets (classic cross-reference table, cross-reference streams,
// a PDF/A document, rotated pages, many pages), with and without the
// certificate pages, and requires every validator to accept the output
// without an error or a warning (pdfcheck: qpdf, pdffonts, pdfinfo,
// mutool, pdfcpu).
func TestSignedOutputConforms(t *testing.T) {
	t.Parallel()
	svc := newService(t, storetest.Open(t, storetest.URL(t, "sqlite")))
	classic := pdftest.OnePage("Service agreement")
	inputs := map[string][]byte{
		"classic xref":  classic,
		"xref streams":  qpdf(t, classic, "IN", "--object-streams=generate"),
		"rotated pages": qpdf(t, classic, "IN", "--rotate=+90"),
		"many pages":    qpdf(t, classic, append(append([]string{"--empty", "--pages"}, strings.Fields(strings.Repeat("IN 1-z ", 40))...), "--")...),
		"PDF/A":         pdfA(),
	}
	for name, in := range inputs {
		pdfcheck.Valid(t, name+" (input)", in)
		for _, cert := range []bool{false, true} {
			what := fmt.Sprintf("%s, certificate %v", name, cert)
			out := signChecked(t, svc, in, cert, what)
			pdfcheck.Valid(t, what, out)
			if name == "PDF/A" {
				checkPDFAAppearance(t, what, out, cert)
			}
		}
	}
}

// TestSignedCorpusConforms signs a sample of the shared corpus: the first
// files (by name) that every validator accepts as they are, so that a
// problem found in an output is one that signing made.
func TestSignedCorpusConforms(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../../shared/corpus/pdf/*.pdf")
	if len(files) == 0 {
		t.Skip("../shared/corpus/pdf is absent: the shared corpus is not checked out beside this worktree")
	}
	sort.Strings(files)
	const sample = 12
	svc := newService(t, storetest.Open(t, storetest.URL(t, "sqlite")))
	signed := 0
	for _, f := range files {
		if signed == sample {
			break
		}
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(in) > 1<<20 || len(pdfcheck.Problems(t, in)) > 0 {
			continue
		}
		signed++
		for _, cert := range []bool{false, true} {
			what := fmt.Sprintf("%s, certificate %v", filepath.Base(f), cert)
			pdfcheck.Valid(t, what, signChecked(t, svc, in, cert, what))
		}
	}
	if signed < sample {
		t.Errorf("only %d corpus files pass the validators as they are; want a sample of %d", signed, sample)
	}
	t.Logf("signed %d clean corpus files, with and without certificate pages", signed)
}

// TestTypedSignatureSigned signs for signers who drew nothing: the
// certificate page of the signed file shows each name, typed, in the
// signature box and in the Signer section, and pdftotext reads it exactly
// as written (the Devanagari name's vowel signs and reph included); pdfsig
// and every validator accept the file.
func TestTypedSignatureSigned(t *testing.T) {
	t.Parallel()
	svc := newService(t, storetest.Open(t, storetest.URL(t, "sqlite")))
	for _, name := range []string{"Ann Example", "राम प्रसाद शर्मा"} {
		req := Request{Document: Document{Bytes: pdftest.OnePage("Agreement")}, Certificate: true,
			Signer:     Signer{Name: name, Email: "signer@example.com"},
			AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}}}
		res, err := svc.Sign(context.Background(), req, "key")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pdfcheck.Valid(t, name, res.PDF)
		path := filepath.Join(t.TempDir(), "signed.pdf")
		if err := os.WriteFile(path, res.PDF, 0o600); err != nil {
			t.Fatal(err)
		}
		if out := command(t, "pdfsig", path); !strings.Contains(out, "Signature is Valid.") {
			t.Errorf("%s: pdfsig:\n%s", name, out)
		}
		// Page 2 is the certificate page; pdftotext puts each value on a
		// line of its own.
		n := 0
		for _, l := range strings.Split(command(t, "pdftotext", "-enc", "UTF-8", "-f", "2", "-l", "2", path, "-"), "\n") {
			if strings.TrimSpace(l) == name {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%s: pdftotext gives the name as a line %d times, want 2 (signature box and Signer section)", name, n)
		}
	}
}

// signChecked signs in for Ann, who drew her signature (a PNG with a
// transparent background), and requires a valid signature over the whole
// output.
func signChecked(t *testing.T, svc *Service, in []byte, cert bool, what string) []byte {
	t.Helper()
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	req := Request{Document: Document{Bytes: in}, Certificate: cert,
		Signer: Signer{Name: "Ann Example", Email: "ann@example.com"},
		AuditTrail: []AuditEvent{
			{Type: "field_change", Timestamp: at, Data: map[string]any{"fieldId": "signature", "value": drawnSignature}},
			{Type: "submit", Timestamp: at}}}
	res, err := svc.Sign(context.Background(), req, "key")
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	v, err := svc.Verify(context.Background(), Document{Bytes: res.PDF})
	if err != nil || v.Signer == nil || !v.Signer.Valid || !v.Signer.CoversWholeDocument {
		t.Errorf("%s: the signature does not verify: %+v %v", what, v, err)
	}
	return res.PDF
}

// checkPDFAAppearance: what signing adds to a PDF/A document keeps to
// PDF/A: every font embedded, no soft mask or transparency group, and the
// catalog keeps its OutputIntent and XMP metadata. With the certificate
// page, the drawn signature is there, as an opaque image.
func checkPDFAAppearance(t *testing.T, what string, out []byte, cert bool) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pdfa.pdf")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	fonts := command(t, "pdffonts", path)
	for _, row := range strings.Split(strings.TrimSpace(fonts), "\n")[2:] {
		if f := strings.Fields(row); len(f) < 7 || f[len(f)-5] != "yes" {
			t.Errorf("%s: a font is not embedded: %q", what, row)
		}
	}
	qdf := command(t, "qpdf", "--qdf", "--object-streams=disable", path, "-")
	if cert && !strings.Contains(qdf, "/Subtype /Image") {
		t.Errorf("%s: the drawn signature is not embedded", what)
	}
	for _, bad := range []string{"/SMask", "/Transparency"} {
		if strings.Contains(qdf, bad) {
			t.Errorf("%s: the output holds %s", what, bad)
		}
	}
	root := command(t, "mutool", "show", path, "trailer/Root")
	for _, want := range []string{"/OutputIntents", "/Metadata"} {
		if !strings.Contains(root, want) {
			t.Errorf("%s: the catalog lost %s:\n%s", what, want, root)
		}
	}
}

// drawnSignature is a data URI of a PNG as a signing pad sends it: a black
// stroke on a transparent background.
var drawnSignature = func() string {
	img := image.NewNRGBA(image.Rect(0, 0, 120, 40))
	for x := range 120 {
		img.SetNRGBA(x, 20+x%10, color.NRGBA{A: 0xff})
	}
	var b bytes.Buffer
	png.Encode(&b, img) // writes to a bytes.Buffer cannot fail
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}()

// pdfA is a one-page document that claims PDF/A-2B: XMP metadata with
// pdfaid, and an sRGB OutputIntent. Its page draws a rectangle, no text,
// so that every font of the signed output is one signing added.
func pdfA() []byte { return pdfAPart(2) }

// pdfAPart is pdfA claiming PDF/A part 1, 2 or 3, level B.
func pdfAPart(part int) []byte {
	xmp := `<?xpacket begin="` + "\ufeff" + `" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"><pdfaid:part>` + strconv.Itoa(part) + `</pdfaid:part><pdfaid:conformance>B</pdfaid:conformance></rdf:Description>
</rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>`
	content := "0 0 1 rg 72 600 200 100 re f"
	icc := iccProfile()
	f := pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R /Metadata 5 0 R /OutputIntents [<< /Type /OutputIntent /S /GTS_PDFA1 /OutputConditionIdentifier (sRGB) /DestOutputProfile 6 0 R >>] >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		fmt.Sprintf("<< /Type /Metadata /Subtype /XML /Length %d >>\nstream\n%s\nendstream", len(xmp), xmp),
		fmt.Sprintf("<< /N 3 /Length %d >>\nstream\n%s\nendstream", len(icc), icc))
	// PDF/A wants a file identifier; the trailer follows the offsets.
	id := "<0123456789abcdef0123456789abcdef>"
	return bytes.Replace(f, []byte("/Root 1 0 R >>"), []byte("/Root 1 0 R /ID ["+id+" "+id+"] >>"), 1)
}

// iccProfile is the header of an ICC v2 RGB display profile with no tags:
// enough for the validators, which check the OutputIntent's structure.
func iccProfile() []byte {
	p := make([]byte, 132)
	binary.BigEndian.PutUint32(p[0:], uint32(len(p)))
	copy(p[8:], []byte{2, 0x10, 0, 0})
	copy(p[12:], "mntrRGB XYZ ")
	copy(p[36:], "acsp")
	return p
}

// qpdf runs qpdf with args, in which IN stands for in's path, and
// returns the file it writes.
func qpdf(t *testing.T, in []byte, args ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "out.pdf")
	if err := os.WriteFile(src, in, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if a == "IN" {
			args[i] = src
		}
	}
	command(t, "qpdf", append(args, dst)...)
	out, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// command runs a tool and returns its standard output; failing, or any
// message on standard error, fails the test.
func command(t *testing.T, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is not installed: run scripts/setup --test", name)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}
