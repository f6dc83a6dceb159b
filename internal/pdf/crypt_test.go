package pdf

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// pageText is the decoded content of every page of d, in order, and the
// text strings of the document information dictionary.
func pageText(t *testing.T, d *Document) []byte {
	t.Helper()
	pages, err := d.Pages()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, p := range pages {
		st, err := d.Resolve(p.Dict["Contents"])
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := st.(*Stream); ok {
			data, err := d.Decode(s)
			if err != nil {
				t.Fatalf("page %v: %v", p.Ref, err)
			}
			out.Write(data)
		}
	}
	_, info := d.Info()
	for _, k := range []Name{"Title", "Author", "Producer"} {
		out.Write(stringBytes(info[k]))
	}
	return out.Bytes()
}

// TestDecryptEmptyUserPassword reads the corpus's files encrypted with an
// empty user password (RC4 40 and 128 bits, AES-128, AES-256 R6) and
// requires their pages and information dictionary to read as qpdf's
// decrypted copy of each does.
func TestDecryptEmptyUserPassword(t *testing.T) {
	t.Parallel()
	pdftest.RequireTool(t, "qpdf", "qpdf")
	names := []string{"qpdf__enc-R2,V1.pdf", "qpdf__enc-R3,V2.pdf", "qpdf__V4.pdf", "qpdf__V4-aes.pdf", "qpdf__V4-aes-clearmeta.pdf",
		"qpdf__enc-XI-R6,V5,O=master.pdf", "qpdf__encrypted-with-images.pdf", "qpdf__copied-positive-P.pdf"}
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("PDF corpus not found at %s (it lives beside the repository in shared/corpus/pdf)", corpusDir)
	}
	for _, name := range names {
		in, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil {
			t.Fatal(err)
		}
		clear := filepath.Join(t.TempDir(), "clear.pdf")
		if out, err := exec.Command("qpdf", "--decrypt", "--object-streams=disable", filepath.Join(corpusDir, name), clear).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("WARNING")) {
			t.Fatalf("%s: qpdf --decrypt: %v\n%s", name, err, out)
		}
		want, _ := os.ReadFile(clear)
		dWant, err := Read(want, Limits{})
		if err != nil {
			t.Fatalf("%s: the decrypted copy: %v", name, err)
		}
		d, err := Read(in, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, w := pageText(t, d), pageText(t, dWant); !bytes.Equal(got, w) || len(w) == 0 {
			t.Errorf("%s: decrypted pages differ from qpdf's (%d and %d bytes)", name, len(got), len(w))
		}
		if _, err := d.Save(); !errors.Is(err, ErrEncrypted) {
			t.Errorf("%s: Save of an encrypted document: %v, want ErrEncrypted", name, err)
		}
	}
	for _, name := range []string{"qpdf__c-r2.pdf", "qpdf__enc-XI-R6,V5,U=view,O=master.pdf", "qpdf__enc-R3,V2,U=view,O=view.pdf"} {
		in, _ := os.ReadFile(filepath.Join(corpusDir, name))
		if _, err := Read(in, Limits{}); !errors.Is(err, ErrEncrypted) {
			t.Errorf("%s (a user password): %v, want ErrEncrypted", name, err)
		}
		if _, err := Open(t.Context(), in, Limits{}); !errors.Is(err, ErrEncrypted) {
			t.Errorf("%s: Open: %v, want ErrEncrypted", name, err)
		}
	}
}
