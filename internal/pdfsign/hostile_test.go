package pdfsign

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// withExtraFields adds n signature fields to a signed file, in an update:
// sharing the /V of its first signature, or each with a copy of it.
func withExtraFields(t *testing.T, signed []byte, n int, shareV bool) []byte {
	t.Helper()
	d, err := pdf.Read(signed, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	catRef, cat, _ := d.Catalog()
	form, err := d.Dict(cat["AcroForm"])
	if err != nil {
		t.Fatal(err)
	}
	fields, _ := d.Array(form["Fields"])
	first, _ := d.Dict(fields[0])
	vRef := first["V"].(pdf.Ref)
	sig, _ := d.Dict(vRef)
	all := append(pdf.Array{}, fields...)
	for i := 0; i < n; i++ {
		v := vRef
		if !shareV {
			v = d.Add(sig.Clone())
		}
		all = append(all, d.Add(pdf.Dict{"FT": pdf.Name("Sig"), "T": pdf.String(fmt.Sprintf("Extra%d", i)), "V": v}))
	}
	f := form.Clone()
	f["Fields"] = all
	c := cat.Clone()
	c["AcroForm"] = f
	d.Replace(catRef, c)
	out, err := d.Save()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVerifySignatureCaps(t *testing.T) {
	id := testIdentity(t)
	signed, _, err := signBytes(t.Context(), pdftest.Generated(1, false, 0), id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 2000 fields naming one signature dictionary: one signature.
	shared := withExtraFields(t, signed, 2000, true)
	res, err := Verify(shared, id.Roots(), pdf.Limits{})
	if err != nil || len(res.Signers) != 1 || !res.Signers[0].SignatureValid {
		t.Fatalf("shared /V: %v, %d signers %+v", err, len(res.Signers), res)
	}
	// 100 signatures are verified; Sign adds no 101st.
	hundred := withExtraFields(t, signed, maxSignatures-1, false)
	if res, err := Verify(hundred, nil, pdf.Limits{}); err != nil || len(res.Signers) != maxSignatures {
		t.Fatalf("%d signatures: %v, %d signers", maxSignatures, err, len(res.Signers))
	}
	if _, _, err := signBytes(t.Context(), hundred, id, Options{}); !errorsIs(err, pdf.ErrUnreadable) {
		t.Fatalf("Sign on %d signatures: %v, want pdf.ErrUnreadable", maxSignatures, err)
	}
	// Beyond the cap, Verify refuses.
	over := withExtraFields(t, signed, maxSignatures, false)
	if _, err := Verify(over, nil, pdf.Limits{}); !errorsIs(err, pdf.ErrUnreadable) {
		t.Fatalf("%d signatures: %v, want pdf.ErrUnreadable", maxSignatures+1, err)
	}
}

func TestDamagedInputForCertificatePages(t *testing.T) {
	id := testIdentity(t)
	good := pdftest.OnePage("host")
	brokenXRef := bytes.Replace(good, []byte("\nxref\n"), []byte("\nxreX\n"), 1)
	wrongOffsets := bytes.Replace(good, []byte("0000000015 00000 n"), []byte("0000000001 00000 n"), 1)
	cases := map[string][]byte{
		"junk before %PDF-": append([]byte("JUNK\r\n\x00\x01 garbage line\n"), good...),
		"broken xref":       brokenXRef,
		"wrong offsets":     wrongOffsets,
		"not a PDF":         []byte("hello"),
	}
	if bytes.Equal(wrongOffsets, good) || bytes.Equal(brokenXRef, good) {
		t.Fatal("damage not applied")
	}
	page := pdf.Page{MediaBox: [4]float64{0, 0, 300, 200}, Content: []byte("0 0 m 10 10 l S")}
	for name, in := range cases {
		d, err := pdf.Open(t.Context(), in, pdf.Limits{})
		if err != nil {
			if sentinel(err) == "" {
				t.Errorf("%s: Open: %v matches no sentinel error", name, err)
			}
			continue
		}
		first, err := d.AppendPages([]pdf.Page{page})
		if err != nil {
			if sentinel(err) == "" {
				t.Errorf("%s: AppendPages: %v matches no sentinel error", name, err)
			}
			continue
		}
		signed, _, err := Sign(t.Context(), d, id, Options{Page: first})
		if err != nil {
			if sentinel(err) == "" {
				t.Errorf("%s: Sign: %v matches no sentinel error", name, err)
			}
			continue
		}
		res, err := Verify(signed, id.Roots(), pdf.Limits{})
		if err != nil || !res.Valid {
			t.Errorf("%s: signed output: %v %+v", name, err, res)
		}
		t.Logf("%s: repaired, %d page(s) before appending, signed", name, first-1)
	}
	// These damages are repairable: they must not merely be refused.
	for _, name := range []string{"junk before %PDF-", "broken xref"} {
		if _, err := appendPages(t.Context(), cases[name], []pdf.Page{page}); err != nil {
			t.Errorf("%s: AppendPages: %v", name, err)
		}
	}
}

// TestHostileFiles runs each pathological file of pdftest through what
// signing with a certificate page does (Open, LastPageSize, AppendPages,
// Sign) and through Verify. Each must be refused with a sentinel error or, for
// the repairable ones, signed into a file that verifies; within the
// memory bound of one request. The bytes allocated measure the work, not
// the time taken: a reader that parses the file once per object, or
// inflates a bomb, allocates as much. A hang is left to go test -timeout.
func TestHostileFiles(t *testing.T) {
	id := testIdentity(t)
	for _, h := range pdftest.HostileFiles() {
		t.Run(h.Name, func(t *testing.T) {
			var signed []byte
			var err error
			n := pdftest.Allocated(func() { signed, err = signWithPage(t.Context(), h.PDF, id) })
			t.Logf("%d bytes: %d allocated; %v", len(h.PDF), n, err)
			if n > pdftest.MemoryBound(len(h.PDF)) {
				t.Errorf("%d bytes allocated for a file of %d, more than %d", n, len(h.PDF), pdftest.MemoryBound(len(h.PDF)))
			}
			switch {
			case err != nil && sentinel(err) == "":
				t.Errorf("error matches no sentinel: %v", err)
			case err != nil && h.Repairable:
				t.Errorf("repairable file refused: %v", err)
			case err == nil && !h.Repairable:
				t.Errorf("unrepairable file signed")
			case err == nil:
				if res, err := Verify(signed, id.Roots(), pdf.Limits{}); err != nil || !res.Valid {
					t.Errorf("signed output does not verify: %v %+v", err, res)
				}
			}
			n = pdftest.Allocated(func() { _, err = Verify(h.PDF, nil, pdf.Limits{}) })
			if err != nil && sentinel(err) == "" {
				t.Errorf("Verify: error matches no sentinel: %v", err)
			}
			if n > pdftest.MemoryBound(len(h.PDF)) {
				t.Errorf("Verify: %d bytes allocated for a file of %d", n, len(h.PDF))
			}
		})
	}
}

// signWithPage does what the signing service does with the certificate
// page on: it appends a page the size of the last one and signs there.
func signWithPage(ctx context.Context, b []byte, id *Identity) ([]byte, error) {
	d, err := pdf.Open(ctx, b, pdf.Limits{})
	if err != nil {
		return nil, err
	}
	w, h, err := d.LastPageSize()
	if err != nil {
		return nil, err
	}
	page := pdf.Page{MediaBox: [4]float64{0, 0, w, h}, Content: []byte("0 0 m 10 10 l S")}
	first, err := d.AppendPages([]pdf.Page{page})
	if err != nil {
		return nil, err
	}
	signed, _, err := Sign(ctx, d, id, Options{Page: first, Rect: [4]float64{10, 10, 100, 50}})
	return signed, err
}
