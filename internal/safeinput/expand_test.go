package safeinput

import (
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// TestDTDScannerFindsMarksAcrossWrites writes XML with a DOCTYPE one to
// seven bytes at a time: the mark is found wherever the writes cut it.
func TestDTDScannerFindsMarksAcrossWrites(t *testing.T) {
	for _, doc := range []string{convtest.DTDDocument("http://h/x.dtd"), convtest.UTF16LE(convtest.DTDDocument("http://h/x.dtd")), "\xfe\xff" + string(utf16Bytes(convtest.DTDDocument("x"), true))} {
		for step := 1; step <= 7; step++ {
			s, err := &dtdScanner{}, error(nil)
			for b := []byte(doc); len(b) > 0 && err == nil; b = b[min(step, len(b)):] {
				_, err = s.Write(b[:min(step, len(b))])
			}
			if !errors.Is(err, errDTD) {
				t.Errorf("%d-byte writes of %.20q: no DTD found", step, doc)
			}
		}
	}
	s := &dtdScanner{}
	for _, w := range []string{"<w:document><!-- <!DOC", "TYPX --></w:document>", strings.Repeat("<!DOCTYP", 100)} {
		if _, err := s.Write([]byte(w)); err != nil {
			t.Errorf("%q: %v, but no DOCTYPE was written", w, err)
		}
	}
}
