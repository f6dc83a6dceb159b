package pdf

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// deflated is data compressed with zlib.
func deflated(data []byte) []byte {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	return z.Bytes()
}

// withStream is a one-page file whose object 6 is a stream of the given
// /Filter and data.
func withStream(filter string, data []byte) []byte {
	return pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /XObject << /Im0 6 0 R >> >> >>",
		"<< /Length 0 >>\nstream\n\nendstream",
		"null",
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /BitsPerComponent 8 /ColorSpace /DeviceGray /Filter %s /Length %d >>\nstream\n%s\nendstream", filter, len(data), data))
}

// TestCheckAll: every stream's Flate filters are undone within the decode
// budget, those before an image codec too; the codec itself is not, and
// the error names the object.
func TestCheckAll(t *testing.T) {
	t.Parallel()
	bomb := pdftest.FlateBomb(4 << 20)
	for _, c := range []struct {
		name, filter string
		data         []byte
		fails        bool
	}{
		{"flate within the budget", "/FlateDecode", deflated(make([]byte, 64<<10)), false},
		{"flate twice within the budget", "[/FlateDecode /Fl]", deflated(deflated([]byte("image"))), false},
		{"flate bomb", "[/FlateDecode /FlateDecode]", bomb, true},
		{"flate bomb before an image codec", "[/FlateDecode /FlateDecode /DCTDecode]", bomb, true},
		{"damaged flate before an image codec", "[/FlateDecode /DCTDecode]", []byte("not zlib"), true},
		{"an image codec alone is left to its reader", "/DCTDecode", []byte("not a JPEG"), false},
	} {
		d, err := Read(withStream(c.filter, c.data), Limits{MaxDecodedSize: 1 << 20})
		if err != nil {
			t.Fatalf("%s: Read: %v", c.name, err)
		}
		err = d.CheckAll(context.Background())
		switch {
		case c.fails && (!errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "object 6")):
			t.Errorf("%s: %v, want ErrUnreadable naming object 6", c.name, err)
		case !c.fails && err != nil:
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestCheckAllStopsWhenCancelled: a document of thousands of objects is
// not walked to its end once the context has ended.
func TestCheckAllStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	d, err := Read(pdftest.Generated(1000, false, 0), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.CheckAll(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("CheckAll with a cancelled context: %v", err)
	}
	if err := d.CheckAll(context.Background()); err != nil {
		t.Fatalf("CheckAll: %v", err)
	}
}
