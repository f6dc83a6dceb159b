package pdfsign

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// The EU DSS library, beside the repository (shared/tools/validators).
const dssLib = "../../../shared/tools/validators/dss-lib"

// dssSig is DSS's verdict on one signature.
type dssSig struct{ format, indication, sub string }

// dssValidate validates files with EU DSS in one JVM (testdata/
// DssBatch.java), each with the trust anchors given, under policy (a
// file; "" for DSS's default). It returns, per file, the verdict per
// signature field.
func dssValidate(t *testing.T, files []string, trust []string, policy string) []map[string]dssSig {
	t.Helper()
	var manifest strings.Builder
	for _, f := range files {
		fmt.Fprintf(&manifest, "%s\t%s\n", f, strings.Join(trust, ","))
	}
	list := writeTemp(t, "manifest.txt", []byte(manifest.String()))
	args := []string{"-Xmx1g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=off",
		"-cp", dssLib + "/*", "testdata/DssBatch.java", list}
	if policy != "" {
		args = append(args, policy)
	}
	out, err := exec.Command("java", args...).Output()
	if err != nil {
		t.Fatalf("DssBatch: %v\n%s", err, out)
	}
	var res []map[string]dssSig
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		switch f[0] {
		case "file":
			res = append(res, map[string]dssSig{})
		case "signature":
			res[len(res)-1][f[1]] = dssSig{format: f[2], indication: f[3], sub: f[4]}
		case "error":
			t.Errorf("DSS on file %d: %s", len(res), f[1])
		}
	}
	if len(res) != len(files) {
		t.Fatalf("DSS answered for %d of %d files:\n%s", len(res), len(files), out)
	}
	return res
}

// strictPolicy is DSS's default validation policy with the checks of
// changes after a signature raised from warnings to failures, as quire
// judges them: DocMDP, FieldMDP and lock violations, and changes DSS
// cannot classify. The policy is read from DSS's own jar.
func strictPolicy(t *testing.T) string {
	t.Helper()
	jars, _ := filepath.Glob(dssLib + "/dss-*-local.jar")
	if len(jars) == 0 {
		t.Fatalf("no DSS jar in %s", dssLib)
	}
	z, err := zip.OpenReader(jars[0])
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	f, err := z.Open("policy/constraint.xml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	policy := string(b)
	for _, c := range []string{"DocMDP", "FieldMDP", "SigFieldLock", "UndefinedChanges"} {
		policy = strings.ReplaceAll(policy, "<"+c+` Level="WARN" />`, "<"+c+` Level="FAIL" />`)
	}
	return writeTemp(t, "strict-constraint.xml", []byte(policy))
}

// TestAgreesWithDSS verifies every signed document the other tests make
// (quire's own at each level, openssl's, the attacks, several signers)
// with quire and with EU DSS, under the same trust anchors, and requires
// the same format level, indication and sub-indication for each
// signature, but where the difference is on purpose (dssDiffers).
func TestAgreesWithDSS(t *testing.T) {
	if _, err := os.Stat(dssLib); err != nil {
		t.Skipf("EU DSS not found at %s (it lives beside the repository in shared/tools/validators)", dssLib)
	}
	pdftest.RequireTool(t, "java", "openjdk-17-jdk-headless")
	s := newSignerSet(t)
	s.attacks(t)
	s.permitted(t)
	s.foreign(t)
	for _, lvl := range []Level{LevelB, LevelT, LevelLT, LevelLTA} {
		opt := Options{Name: "Level " + lvl.String(), Level: lvl, Fetch: fetchHTTP}
		if lvl > LevelB {
			opt.Timestamper = &TSAClient{URL: s.tsa.URL}
		}
		b, _, err := signBytes(context.Background(), contract(docSpec{}), s.id, opt)
		if err != nil {
			t.Fatal(err)
		}
		s.files = append(s.files, namedFile{"quire " + lvl.String(), b})
	}
	for _, f := range signedCorpus(t) {
		b, _ := os.ReadFile(f)
		s.files = append(s.files, namedFile{"corpus " + filepath.Base(f), b})
	}
	trust := []string{pemFile(t, s.id.Root()), s.ca.caPEM, writeTemp(t, "tsa.pem", s.tsa.RootPEM)}
	dir := t.TempDir()
	paths := make([]string, len(s.files))
	for i, f := range s.files {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%03d.pdf", i))
		if err := os.WriteFile(paths[i], f.pdf, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	verdicts := dssValidate(t, paths, trust, strictPolicy(t))
	agreed, differed := 0, 0
	for i, f := range s.files {
		res, err := VerifyWith(f.pdf, s.opts, pdf.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		for _, sr := range res.Signers {
			if sr.SubFilter == "ETSI.RFC3161" {
				continue // DSS reports document time-stamps apart from signatures
			}
			d, ok := verdicts[i][sr.Field]
			ours := dssSig{format: deref(sr.Level), indication: sr.Indication, sub: deref(sr.SubIndication)}
			if !ok {
				d = dssSig{format: "(not reported)"}
			}
			if d.sub == "" || d.sub == "-" {
				d.sub = "null"
			}
			if d.format == "PDF-NOT-ETSI" { // a PAdES SubFilter whose CMS is no baseline: quire's level is null
				d.format = "null"
			}
			if ours == d {
				agreed++
				continue
			}
			why := dssDiffers(f.name, ours, d)
			if why == "" {
				t.Errorf("%s, %s: quire %v, DSS %v", f.name, sr.Field, ours, d)
				continue
			}
			differed++
			t.Logf("%s, %s: quire %v, DSS %v: %s", f.name, sr.Field, ours, d, why)
		}
	}
	t.Logf("%d signatures agree with EU DSS, %d differ on purpose, over %d files", agreed, differed, len(s.files))
}

// dssDiffers says why quire's verdict differs from DSS's on purpose, or
// "" when it should not.
func dssDiffers(name string, ours, d dssSig) string {
	failed := ours.indication == TotalFailed && ours.sub == subFormat
	switch {
	case failed && d.format == "(not reported)" && strings.HasPrefix(name, "USF"):
		return "DSS takes a signature dictionary without a usable /ByteRange or /Contents for no signature at all; " +
			"quire reports the signed field's value as a forged signature (neither calls the document valid)"
	case failed && strings.HasPrefix(name, "ISA") && d.indication != TotalFailed:
		return "bytes appended after the last revision that no cross-reference section reaches: DSS's reader ignores them, " +
			"quire fails the signatures, since a viewer that repairs the file shows them"
	case failed && (strings.HasPrefix(name, "shadow hide") || strings.HasPrefix(name, "sneaky") || strings.HasPrefix(name, "evil")) && d.indication != TotalFailed:
		return "a field, signature widget or annotation drawn over signed text: DSS's policy only warns (PdfVisualDifference, " +
			"PdfAnnotationOverlap), and failing those there would fail legitimate form filling too; quire compares with what the signed page paints"
	case name == "SWA" && ours.indication == d.indication && ours.sub == d.sub:
		return "signature wrapping: DSS reads the wrapped dictionary's entries after /Contents from the relocated bytes, and so its format differently"
	}
	return ""
}

// signedCorpus lists the signed PDFs of the shared corpus that read.
func signedCorpus(t *testing.T) []string {
	var out []string
	for _, f := range corpusFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), "/ByteRange") {
			continue
		}
		if _, err := pdf.Read(b, pdf.Limits{}); err == nil {
			out = append(out, f)
		}
	}
	return out
}
