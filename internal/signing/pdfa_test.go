package signing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/conform/veratest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign"
)

// TestSignedPDFAValidates signs PDF/A-1b, 2b and 3b documents at each
// level, with the certificate pages, three times: the first signer's
// name in Latin, CJK and Devanagari on the certificate page, the next two
// in the boxes for later signers, in CJK and in Devanagari. veraPDF must
// find each output compliant with the part its input claims: every font
// subset with its CIDSet, every widget (signatures, reserved boxes,
// document time-stamps) with an appearance.
func TestSignedPDFAValidates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tsa := pdftest.NewTSA(t)
	dir := t.TempDir()
	levels := []pdfsign.Level{pdfsign.LevelB, pdfsign.LevelT, pdfsign.LevelLT, pdfsign.LevelLTA}
	for part := 1; part <= 3; part++ {
		flavour := fmt.Sprintf("%db", part)
		in := pdfAPart(part)
		files := []string{writePDF(t, dir, flavour+"-input", in)}
		for _, level := range levels {
			svc := levelService(t, level, tsa)
			doc := in
			for _, who := range []string{"Zoë Ångström 王小明 राम प्रसाद", "山田太郎", "राम प्रसाद शर्मा"} {
				req := submittedBy(doc, who)
				req.Signer.Email = "signer@example.com"
				req.Strict = true
				res, err := svc.Sign(ctx, req, "key")
				if err != nil {
					t.Fatalf("PDF/A-%s at %s, %s: %v", flavour, level, who, err)
				}
				doc = res.PDF
			}
			files = append(files, writePDF(t, dir, fmt.Sprintf("%s-%s", flavour, level), doc))
		}
		// One veraPDF run for the input and its outputs: the JVM's start
		// costs more than the checks.
		reports := veratest.Validate(t, flavour, files)
		if r := reports[files[0]]; !r.Compliant {
			t.Fatalf("the PDF/A-%s input is not compliant:\n  %s", flavour, strings.Join(r.Failed, "\n  "))
		}
		for i, level := range levels {
			if r := reports[files[i+1]]; !r.Compliant {
				t.Errorf("PDF/A-%s signed three times at %s is not compliant:\n  %s", flavour, level, strings.Join(r.Failed, "\n  "))
			}
		}
	}
}

// writePDF writes pdf into dir as name.pdf and returns its path.
func writePDF(t *testing.T, dir, name string, pdf []byte) string {
	t.Helper()
	path := filepath.Join(dir, name+".pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
