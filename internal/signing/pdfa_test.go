package signing

import (
	"context"
	"fmt"
	"testing"

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
	ctx := context.Background()
	tsa := pdftest.NewTSA(t)
	for part := 1; part <= 3; part++ {
		flavour := fmt.Sprintf("%db", part)
		in := pdfAPart(part)
		if report, ok := pdftest.VeraPDF(t, in, flavour); !ok {
			t.Fatalf("the PDF/A-%s input is not compliant:\n%s", flavour, report)
		}
		for _, level := range []pdfsign.Level{pdfsign.LevelB, pdfsign.LevelT, pdfsign.LevelLT, pdfsign.LevelLTA} {
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
			if report, ok := pdftest.VeraPDF(t, doc, flavour); !ok {
				t.Errorf("PDF/A-%s signed three times at %s is not compliant:\n%s", flavour, level, report)
			}
		}
	}
}
