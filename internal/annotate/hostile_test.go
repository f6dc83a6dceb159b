package annotate

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/annotate/annotatetest"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/memory/memtest"
	"github.com/quire-dev/quire/internal/ooxml"
)

// withPart returns the package with one part set to body.
func withPart(t *testing.T, docx []byte, name string, body []byte) []byte {
	t.Helper()
	p := mustOpen(t, docx)
	var e ooxml.Edits
	e.Set(p, name, body)
	out, err := p.Rewrite(&e, documentPart)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// understated returns the package with an extra entry whose header
// declares 100 bytes while it inflates to all of body.
func understated(t *testing.T, name string, body []byte) []byte {
	t.Helper()
	var deflated bytes.Buffer
	fw, _ := flate.NewWriter(&deflated, flate.BestCompression)
	fw.Write(body)
	fw.Close()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range []struct{ name, body string }{{contentTypesPart, "<Types/>"}} {
		fw, _ := w.Create(e.name)
		fw.Write([]byte(e.body))
	}
	raw, err := w.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(body),
		CompressedSize64: uint64(deflated.Len()), UncompressedSize64: 100})
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(deflated.Bytes())
	w.Close()
	return buf.Bytes()
}

// pngHeader is the start of a PNG claiming w x h pixels: enough for
// DecodeConfig, a decompression bomb for Decode.
func pngHeader(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6
	chunk := append([]byte("IHDR"), ihdr...)
	b := append([]byte("\x89PNG\r\n\x1a\n"), 0, 0, 0, 13)
	b = append(b, chunk...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(chunk))
}

// TestHostileInput: everything a client can send wrong is a 4xx error of
// the contract, within the limits, never a crash or an internal error.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, fetch.New(fetch.Options{Timeout: 5 * time.Second}).Get) // public addresses only
	small := DefaultLimits
	small.Package.MaxPartSize, small.Package.MaxTotalSize = 1<<20, 2<<20
	small.XML = ooxml.XMLLimits{MaxElements: 10000, MaxDepth: 64}
	e.limits = small
	tmpl := fixture(t, "sdts-basic.docx")
	text := []Field{{ID: "-436595273", Type: TypeText, Value: "x"}}
	doc, _ := mustOpen(t, tmpl).Read(documentPart)
	tests := []struct {
		name   string
		docx   []byte
		fields []Field
		code   string
	}{
		{"empty", nil, text, quire.CodeUnprocessable},
		{"not a zip", []byte("%PDF-1.7 not a docx"), text, quire.CodeUnprocessable},
		{"zip without document", understated(t, "word/other.xml", []byte("<a/>")), text, quire.CodeUnprocessable},
		{"truncated", tmpl[:len(tmpl)/2], text, quire.CodeUnprocessable},
		{"declared zip bomb", withPart(t, tmpl, "word/media/big.bin", make([]byte, 3<<20)), text, quire.CodePayloadTooLarge},
		{"understated zip bomb", understated(t, documentPart, bytes.Repeat([]byte("<a/>"), 4<<20)), text, quire.CodeUnprocessable},
		{"huge XML", withPart(t, tmpl, documentPart, append(doc[:len(doc)-len("</w:document>")], []byte(strings.Repeat("<w:p/>", 20000)+"</w:document>")...)), text, quire.CodePayloadTooLarge},
		{"deep XML", withPart(t, tmpl, documentPart, []byte(strings.Repeat("<a>", 100)+strings.Repeat("</a>", 100))), text, quire.CodePayloadTooLarge},
		{"malformed XML", withPart(t, tmpl, documentPart, doc[:len(doc)-5]), text, quire.CodeUnprocessable},
		{"bad data URI", tmpl, []Field{{ID: "-436595273", Type: TypeImage, Value: "data:image/png,notbase64"}}, quire.CodeValidation},
		{"bad base64", tmpl, []Field{{ID: "-436595273", Type: TypeImage, Value: "data:image/png;base64,!!!"}}, quire.CodeValidation},
		{"not an image", tmpl, []Field{{ID: "-436595273", Type: TypeImage, Value: "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("GIF89a..."))}}, quire.CodeValidation},
		{"pixel bomb", tmpl, []Field{{ID: "-436595273", Type: TypeSignature, Value: "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngHeader(100000, 100000))}}, quire.CodeValidation},
		{"huge image bytes", tmpl, []Field{{ID: "-436595273", Type: TypeImage, Value: "data:image/png;base64," + strings.Repeat("A", 16<<20)}}, quire.CodeValidation},
		{"URL refused", tmpl, []Field{{ID: "-436595273", Type: TypeImage, Value: "http://127.0.0.1/x.png"}}, quire.CodeUnprocessable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := e.Fill(context.Background(), tt.docx, tt.fields)
			var qe *quire.Error
			if !errors.As(err, &qe) || qe.Code != tt.code {
				t.Fatalf("error %v, want %s", err, tt.code)
			}
		})
	}
}

// TestValidate covers what the request itself may get wrong.
func TestValidate(t *testing.T) {
	t.Parallel()
	doc := Document{Bytes: []byte("PK")}
	tests := []struct {
		name  string
		req   Request
		field string
	}{
		{"no document", Request{Fields: []Field{{ID: "1", Type: TypeText}}}, "document"},
		{"both id and group", Request{Document: doc, Fields: []Field{{ID: "1", Group: "g", Type: TypeText}}}, "fields[0]"},
		{"neither id nor group", Request{Document: doc, Fields: []Field{{Type: TypeText}}}, "fields[0]"},
		{"unknown type", Request{Document: doc, Fields: []Field{{ID: "1", Type: "checkbox"}}}, "fields[0].type"},
		{"control characters", Request{Document: doc, Fields: []Field{{ID: "1", Type: TypeText, Value: "a\x00b"}}}, "fields[0].value"},
		{"image that is text", Request{Document: doc, Fields: []Field{{ID: "1", Type: TypeImage, Value: "hello"}}}, "fields[0].value"},
		{"huge width", Request{Document: doc, Fields: []Field{{ID: "1", Type: TypeImage, Value: "data:,", Options: Options{Width: 1e9}}}}, "fields[0].options.dimensions.width"},
		{"bad colour", Request{Document: doc, Fields: []Field{{ID: "1", Type: TypeSignature, Value: "Ann", Options: Options{ArcColor: "red"}}}}, "fields[0].options.arcElement.color"},
		{"too many fields", Request{Document: doc, Fields: make([]Field, MaxFields+1)}, "fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			var qe *quire.Error
			if !errors.As(err, &qe) || qe.Code != quire.CodeValidation {
				t.Fatalf("error %v, want a validation error", err)
			}
			for _, d := range qe.Details {
				if d.Field == tt.field {
					return
				}
			}
			t.Errorf("details %v lack %s", qe.Details, tt.field)
		})
	}
}

// TestLargeTablesStayWithinTheBudget (issue #32): three fills at once of a
// table of 260,000 rows of 10 short cells (a 33 MB request that held about
// 1.1 GB to fill before the rows were written in place), each charged as
// the HTTP adapter charges it (memory.PerBodyByte times its request, then
// its rows' shape), against the default 1 GiB budget: at least one is
// filled, the others refused with 503, and the heap stays within the
// budget plus memory.Margin (the decoded rows, made here before the
// measure starts, are not in it). It watches the process's heap, so it
// is not parallel: the parallel tests of the package run after it.
func TestLargeTablesStayWithinTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("fills tables of 2.6 million cells; not in -short")
	}
	e := newTestEngine(t, nil)
	tmpl, fields := annotatetest.TableTemplate(10), tableField(260_000, 10)
	body, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	const budget, margin = 1 << 30, memory.Margin
	ctx := quire.WithTenant(t.Context(), "key")
	filled, refused, peak := memtest.AtOnce(t, ctx, memory.NewBudget(budget, 100), 3, int64(len(body))*memory.PerBodyByte,
		func(ctx context.Context) error {
			_, _, err := e.Fill(ctx, tmpl, fields)
			return err
		})
	t.Logf("filled %d, refused %d; heap peak %d MiB, budget %d MiB + margin %d MiB", filled, refused, peak>>20, budget>>20, margin>>20)
	if filled == 0 {
		t.Error("no fill was admitted")
	}
	if peak > budget+margin {
		t.Errorf("heap peak %d MiB, more than the budget (%d MiB) plus the margin (%d MiB)", peak>>20, budget>>20, margin>>20)
	}
}
