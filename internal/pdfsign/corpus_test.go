package pdfsign

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// TestCorpus signs every PDF of the shared corpus. Each must be signed
// validly (Verify, qpdf --check, pdfsig) or refused with a sentinel error;
// anything else, a panic included, fails the test.
func TestCorpus(t *testing.T) {
	files := corpusFiles(t)
	requireValidators(t)
	id := testIdentity(t)
	nss := nssDB(t, id)
	counts := map[string]int{}
	var inherited []string
	for _, f := range files {
		name := filepath.Base(f)
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := signBytes(context.Background(), in, id, Options{Name: "Corpus"})
		if err != nil {
			reason := sentinel(err)
			if reason == "" {
				t.Errorf("%s: unexpected error: %v", name, err)
				continue
			}
			counts["refused: "+reason]++
			t.Logf("%s: refused: %v", name, err)
			continue
		}
		counts["signed"]++
		res, err := Verify(out, id.Roots(), pdf.Limits{})
		last := len(res.Signers) - 1
		if err != nil || last < 0 || !res.Signers[last].Valid || !res.Signers[last].CoversWholeDocument {
			t.Errorf("%s: signed output does not verify: %v %+v", name, err, res)
			continue
		}
		if !res.Valid {
			t.Logf("%s: an earlier signature does not verify: %s", name, res.Reason)
		}
		blocks := strings.Split(pdfsig(t, nss, out), "Signature #")
		if report := blocks[len(blocks)-1]; !strings.Contains(report, "Signature is Valid.") || !strings.Contains(report, "Total document signed") {
			t.Errorf("%s: pdfsig on the new signature:\n%s", name, report)
		}
		// qpdf must find no problem in the output that it does not find
		// in the input already (some corpus files have broken content).
		if msg, ok := pdftest.QPDFClean(t, out); !ok {
			if extra := newProblems(msg, qpdfOutput(t, in)); len(extra) > 0 {
				t.Errorf("%s: qpdf --check on output: %v", name, extra)
				continue
			}
			inherited = append(inherited, name)
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("corpus: %-40s %d", k, counts[k])
	}
	t.Logf("corpus: outputs with qpdf findings inherited from their input: %d %v", len(inherited), inherited)
}

// sentinel names the sentinel error err wraps, or "" for none.
func sentinel(err error) string {
	for _, s := range []error{pdf.ErrEncrypted, pdf.ErrDamagedSigned, pdf.ErrUnreadable, pdf.ErrTooLarge, ErrSignatureTooLarge} {
		if errors.Is(err, s) {
			return strings.TrimPrefix(s.Error(), "pdfsign: ")
		}
	}
	return ""
}

func qpdfOutput(t *testing.T, pdf []byte) string {
	out, _ := pdftest.QPDFClean(t, pdf)
	return out
}

// newProblems returns the WARNING/ERROR lines of got that want lacks,
// ignoring the temporary file names.
func newProblems(got, want string) []string {
	seen := map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		seen[problem(l)] = true
	}
	var extra []string
	for _, l := range strings.Split(got, "\n") {
		if p := problem(l); p != "" && !seen[p] {
			extra = append(extra, l)
		}
	}
	return extra
}

// problem reduces a qpdf finding to its text without the file name and
// offsets (a repaired file has the same damage at other offsets).
var offsetRE = regexp.MustCompile(`\([^)]*offset \d+\)`)

func problem(line string) string {
	if !strings.HasPrefix(line, "WARNING") && !strings.HasPrefix(line, "ERROR") {
		return ""
	}
	if i := strings.Index(line, ".pdf"); i >= 0 {
		line = line[i+4:]
	}
	return offsetRE.ReplaceAllString(line, "")
}
