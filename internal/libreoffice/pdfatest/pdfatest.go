// Package pdfatest checks, in tests, that a PDF claims and keeps PDF/A
// conformance, and that it is tagged for PDF/UA.
//
// veraPDF, the reference validator, is Java and packaged neither by
// Debian nor on the registries quire's machines reach, so Check tests
// what can be tested with the tools at hand:
//
//   - identification: the document's XMP metadata (pdfinfo -meta, which
//     reads the catalog's current Metadata stream) claims pdfaid:part N
//     and pdfaid:conformance B (or A, whose requirements include B's);
//   - fonts: pdffonts lists every font as embedded;
//   - colour: the catalog has an OutputIntent of subtype GTS_PDFA1 with a
//     DestOutputProfile (an ICC profile stream);
//   - no encryption: pdfinfo reports Encrypted: no, and the trailer has no
//     Encrypt entry;
//   - version: a PDF/A-1 file is PDF 1.4 at most;
//   - structure: pdfcpu validates the file in its relaxed mode (the
//     syntax and object model of ISO 32000, not PDF/A's own rules).
//
// Not checked: the rest of ISO 19005 (transparency in PDF/A-1, colour
// spaces of every object against the output intent, forbidden actions,
// annotation flags, XMP schema validity), which only a full validator
// checks.
package pdfatest

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// Check fails t for every way pdf does not show PDF/A-{part}b conformance
// (see the package comment for what is checked).
func Check(t testing.TB, pdf []byte, part int) {
	t.Helper()
	for _, p := range Problems(t, pdf, part) {
		t.Errorf("not PDF/A-%db: %s", part, p)
	}
}

// Problems returns what Check would report, for tests that expect some.
func Problems(t testing.TB, pdf []byte, part int) []string {
	t.Helper()
	path := pdftest.WriteTemp(t, pdf)
	var p []string
	info := run(t, "pdfinfo", path)
	if !regexp.MustCompile(`(?m)^Encrypted:\s+no`).MatchString(info) {
		p = append(p, "pdfinfo reports encryption")
	}
	if m := regexp.MustCompile(`(?m)^PDF version:\s+1\.([0-4])$`).FindStringSubmatch(info); part == 1 && m == nil {
		p = append(p, "a PDF/A-1 file must be PDF 1.4 at most: "+firstLine(info, "PDF version"))
	}
	xmp := run(t, "pdfinfo", "-meta", path)
	if got := xmpValue(xmp, "pdfaid:part"); got != strconv.Itoa(part) {
		p = append(p, fmt.Sprintf("XMP pdfaid:part is %q, want %d", got, part))
	}
	// Level A adds tagging to level B's requirements: LibreOffice claims
	// PDF/A-1a when asked for PDF/A-1b (it tags PDF/A-1 output).
	if got := strings.ToUpper(xmpValue(xmp, "pdfaid:conformance")); got != "B" && got != "A" {
		p = append(p, fmt.Sprintf("XMP pdfaid:conformance is %q, want B (or A, which includes B)", got))
	}
	for _, font := range notEmbedded(run(t, "pdffonts", path)) {
		p = append(p, "font not embedded: "+font)
	}
	return append(p, catalogProblems(pdf)...)
}

// notEmbedded returns the rows of pdffonts' table whose emb column is not
// "yes". The columns are where the dashes of the rule under the heading
// are (name, type, encoding, emb, ...): a name can hold spaces, and the
// object column is "12 0" or "[none]".
func notEmbedded(table string) []string {
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "---") {
			continue
		}
		spans := regexp.MustCompile(`-+`).FindAllStringIndex(l, -1)
		if len(spans) < 4 {
			return []string{"pdffonts printed a table without an emb column"}
		}
		emb := spans[3]
		var bad []string
		for _, row := range lines[i+1:] {
			if len(row) < emb[1] || strings.TrimSpace(row[emb[0]:emb[1]]) != "yes" {
				bad = append(bad, row)
			}
		}
		return bad
	}
	return []string{"pdffonts printed no table"}
}

// catalogProblems checks the structure with pdfcpu: the file validates in
// relaxed mode, the catalog has a PDF/A output intent, and the trailer no
// Encrypt entry.
func catalogProblems(pdf []byte) []string {
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	if err := api.Validate(bytes.NewReader(pdf), conf); err != nil {
		return []string{"pdfcpu validation (relaxed): " + err.Error()}
	}
	ctx, err := api.ReadContext(bytes.NewReader(pdf), conf)
	if err != nil {
		return []string{"pdfcpu cannot read it: " + err.Error()}
	}
	var p []string
	if ctx.Encrypt != nil {
		p = append(p, "the trailer has an Encrypt entry")
	}
	catalog, err := ctx.Catalog()
	if err != nil {
		return append(p, "no catalog: "+err.Error())
	}
	intents, err := ctx.DereferenceArray(catalog["OutputIntents"])
	if err != nil || len(intents) == 0 {
		return append(p, "the catalog has no OutputIntents")
	}
	for _, o := range intents {
		d, err := ctx.DereferenceDict(o)
		if err != nil || d == nil {
			continue
		}
		if s := d.NameEntry("S"); s != nil && *s == "GTS_PDFA1" {
			if profile, err := ctx.Dereference(d["DestOutputProfile"]); err == nil {
				if _, ok := profile.(types.StreamDict); ok {
					return p
				}
			}
			return append(p, "the GTS_PDFA1 output intent has no DestOutputProfile stream")
		}
	}
	return append(p, "no output intent of subtype GTS_PDFA1")
}

// CheckTagged fails t unless pdf is tagged, as PDF/UA requires: pdfinfo
// reports "Tagged: yes" (the catalog's MarkInfo) and the catalog has a
// StructTreeRoot.
func CheckTagged(t testing.TB, pdf []byte) {
	t.Helper()
	if info := run(t, "pdfinfo", pdftest.WriteTemp(t, pdf)); !regexp.MustCompile(`(?m)^Tagged:\s+yes`).MatchString(info) {
		t.Errorf("not tagged: pdfinfo says %q", firstLine(info, "Tagged"))
	}
	ctx, err := api.ReadContext(bytes.NewReader(pdf), model.NewDefaultConfiguration())
	if err != nil {
		t.Fatalf("pdfcpu cannot read the PDF: %v", err)
	}
	catalog, err := ctx.Catalog()
	if err != nil {
		t.Fatalf("no catalog: %v", err)
	}
	if root, err := ctx.DereferenceDict(catalog["StructTreeRoot"]); err != nil || root == nil {
		t.Errorf("the catalog has no StructTreeRoot (%v)", err)
	}
}

// xmpValue returns the value of a property in XMP, written as an element
// (<pdfaid:part>2</pdfaid:part>) or as an attribute (pdfaid:part="2").
func xmpValue(xmp, name string) string {
	q := regexp.QuoteMeta(name)
	re := regexp.MustCompile(`<` + q + `>\s*([^<]*?)\s*</` + q + `>|` + q + `\s*=\s*["']([^"']*)["']`)
	m := re.FindStringSubmatch(xmp)
	if m == nil {
		return ""
	}
	return m[1] + m[2]
}

// run runs a poppler tool; a missing tool fails the test with the
// package to install.
func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		if _, look := exec.LookPath(name); look != nil {
			t.Fatalf("%s is missing: apt-get install poppler-utils", name)
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func firstLine(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return prefix + ": (absent)"
}
