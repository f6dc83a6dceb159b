package libreoffice

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
	"github.com/quire-dev/quire/internal/safeinput"
)

// storedWithDescriptors repacks the package in with every entry stored
// and followed by a data descriptor, as Go's zip.Writer writes a stored
// entry (and other streaming writers do).
func storedWithDescriptors(t *testing.T, in []byte) []byte {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(in), int64(len(in)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		dst, _ := w.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Store})
		io.Copy(dst, r)
		r.Close()
	}
	w.Close()
	return b.Bytes()
}

// localFlags returns the general-purpose flags of each local header of
// the ZIP data, in order.
func localFlags(t *testing.T, data []byte) map[string]uint16 {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]uint16{}
	for _, f := range z.File {
		off, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		start := off - 30 - int64(len(f.Name)) - int64(len(f.Extra))
		if start < 0 || binary.LittleEndian.Uint32(data[start:]) != 0x04034b50 {
			t.Fatalf("%s: no local header at %d", f.Name, start)
		}
		flags[f.Name] = binary.LittleEndian.Uint16(data[start+6:])
	}
	return flags
}

// descriptorFlag is the general-purpose bit of a ZIP entry followed by a
// data descriptor.
const descriptorFlag = 0x8

// TestWithoutStoredDescriptors: the cleaning of a package rewrites it when
// a stored entry is followed by a data descriptor, every entry then with
// its sizes in its local header and its content unchanged; a package
// without such entries goes as it came.
func TestWithoutStoredDescriptors(t *testing.T) {
	in := storedWithDescriptors(t, convtest.DOCX(1))
	for name, fl := range localFlags(t, in) {
		if fl&descriptorFlag == 0 {
			t.Fatalf("the test package's %s has no data descriptor", name)
		}
	}
	out := cleaned(t, in)
	for name, fl := range localFlags(t, out) {
		if fl&descriptorFlag != 0 {
			t.Errorf("%s still has a data descriptor", name)
		}
	}
	zin, _ := zip.NewReader(bytes.NewReader(in), int64(len(in)))
	zout, _ := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	if len(zin.File) != len(zout.File) {
		t.Fatalf("%d entries, want %d", len(zout.File), len(zin.File))
	}
	for i, f := range zout.File {
		if f.Name != zin.File[i].Name || !bytes.Equal(readAll(t, f), readAll(t, zin.File[i])) {
			t.Errorf("entry %d: %s differs from %s", i, f.Name, zin.File[i].Name)
		}
	}
	plain := convtest.DOCX(1) // deflated entries with descriptors: left as they are
	if out := cleaned(t, plain); !bytes.Equal(out, plain) {
		t.Errorf("a package without stored descriptors was changed")
	}
}

// cleaned is the DOCX in as the pool hands it to an engine.
func cleaned(t *testing.T, in []byte) []byte {
	t.Helper()
	o, err := Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := safeinput.Prepare(&engine.Request{From: engine.FromDOCX, To: engine.ToPDF}, in, o.inputLimits())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readAll(t *testing.T, f *zip.File) []byte {
	t.Helper()
	r, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r) // Close checks the CRC
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	return b
}

// TestStoredDescriptorsConvert: a DOCX and an ODS whose entries are
// stored and followed by data descriptors, which LibreOffice 25.2 takes
// for damaged packages (it waited for the job's time limit), convert
// well within the job's time limit.
func TestStoredDescriptorsConvert(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	for _, c := range []struct {
		from string
		in   []byte
	}{{engine.FromDOCX, convtest.DOCX(1)}, {engine.FromODS, convtest.ODS(3)}} {
		in := storedWithDescriptors(t, c.in)
		t0 := time.Now()
		pdf, err := p.Convert(context.Background(), in, c.from)
		if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
			t.Errorf("%s with stored entries and data descriptors: %v, want a PDF", c.from, err)
			continue
		}
		t.Logf("%s: converted in %v", c.from, time.Since(t0).Round(time.Millisecond))
	}
}
