package libreoffice

import (
	"archive/zip"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
	"github.com/quire-dev/quire/internal/safeinput"
)

// TestSpreadsheetAndSlideInflationLimits: XLSX, PPTX, ODS and ODP
// packages are measured against the expansion and ratio limits before
// any engine sees them.
func TestSpreadsheetAndSlideInflationLimits(t *testing.T) {
	o, err := Options{MaxExpandedBytes: 4 << 20}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	l := o.inputLimits()
	bomb := func(pkg []byte, size int) []byte {
		h := &zip.FileHeader{Name: "media/zeros.bin", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(make([]byte, size)), UncompressedSize64: uint64(size)}
		data := zeros(size)
		h.CompressedSize64 = uint64(len(data))
		return convtest.PackageWith(pkg, h, data)
	}
	for _, c := range []struct {
		from string
		pkg  []byte
	}{
		{engine.FromXLSX, convtest.XLSX(2)}, {engine.FromPPTX, convtest.PPTX(1)}, {engine.FromODS, convtest.ODS(2)}, {engine.FromODP, convtest.ODP(1)},
	} {
		if _, _, err := safeinput.Prepare(&engine.Request{From: c.from, To: engine.ToPDF}, bomb(c.pkg, 8<<20), l); !errors.Is(err, engine.ErrMemoryLimit) {
			t.Errorf("%s inflating to 8 MiB, limit 4 MiB: %v, want ErrMemoryLimit", c.from, err)
		}
		if _, _, err := safeinput.Prepare(&engine.Request{From: c.from, To: engine.ToPDF}, bomb(c.pkg, 2<<20), l); !errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "compressed") {
			t.Errorf("%s with a part compressed 1000 to 1: %v, want the ratio refused", c.from, err)
		}
		if _, _, err := safeinput.Prepare(&engine.Request{From: c.from, To: engine.ToPDF}, c.pkg, l); err != nil {
			t.Errorf("%s: %v", c.from, err)
		}
	}
}
