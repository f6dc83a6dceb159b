package annotate

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image/png"
	"testing"

	"github.com/quire-dev/quire/internal/annotate/annotatetest"
)

// demoFields are the fields of the e-sign demo's annotate call.
func demoFields() []Field {
	var fields []Field
	for _, f := range annotatetest.TextFields {
		fields = append(fields, Field{ID: f.ID, Type: TypeText, Value: "Bench " + f.Label, Options: Options{KeepTextNodeStyles: true}})
	}
	fields = append(fields, Field{ID: annotatetest.SignatureID, Type: TypeSignature,
		Value:   "data:image/png;base64," + base64.StdEncoding.EncodeToString(annotatetest.Signature()),
		Options: Options{BottomLabel: Label{Text: "ip: 127.0.0.1", Color: "#666"}}})
	return fields
}

// BenchmarkFillDemo fills the e-sign demo's template as its server does.
func BenchmarkFillDemo(b *testing.B) {
	e := newTestEngine(b, nil)
	tmpl, fields := annotatetest.Template(), demoFields()
	for b.Loop() {
		if _, rep, err := e.Fill(context.Background(), tmpl, fields); err != nil || len(rep.Unmatched) > 0 {
			b.Fatal(err, rep)
		}
	}
}

// TestConcurrentFills shares one engine between goroutines (run with -race).
func TestConcurrentFills(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, nil)
	tmpl, fields := annotatetest.Template(), demoFields()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, rep, err := e.Fill(context.Background(), tmpl, fields)
			if err == nil && len(rep.Unmatched) > 0 {
				err = fmt.Errorf("unmatched %v", rep.Unmatched)
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkFillDemoForConversion is BenchmarkFillDemo for to=pdf.
func BenchmarkFillDemoForConversion(b *testing.B) {
	e := newTestEngine(b, nil)
	tmpl, fields := annotatetest.Template(), demoFields()
	for b.Loop() {
		p, edits, _, err := e.FillForConversion(context.Background(), tmpl, fields)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Rewrite(edits, documentPart); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFillForConversion: the same parts as Fill, the stamp the same
// pixels, only stored uncompressed.
func TestFillForConversion(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, nil)
	tmpl, fields := annotatetest.Template(), demoFields()
	packed, _, err := e.Fill(context.Background(), tmpl, fields)
	if err != nil {
		t.Fatal(err)
	}
	p, edits, _, err := e.FillForConversion(context.Background(), tmpl, fields)
	if err != nil {
		t.Fatal(err)
	}
	loose, err := p.Rewrite(edits, documentPart)
	if err != nil {
		t.Fatal(err)
	}
	if len(loose) <= len(packed) {
		t.Errorf("%d bytes for conversion, %d packed", len(loose), len(packed))
	}
	a, b := entries(t, packed), entries(t, loose)
	for name, data := range a {
		if name == "word/media/quire-image1.png" {
			if !samePixels(t, data, b[name]) {
				t.Error("the stamps differ")
			}
			continue
		}
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs", name)
		}
	}
}

func samePixels(t *testing.T, x, y []byte) bool {
	t.Helper()
	ix, err1 := png.Decode(bytes.NewReader(x))
	iy, err2 := png.Decode(bytes.NewReader(y))
	if err1 != nil || err2 != nil || ix.Bounds() != iy.Bounds() {
		t.Fatalf("%v %v", err1, err2)
	}
	for yy := ix.Bounds().Min.Y; yy < ix.Bounds().Max.Y; yy++ {
		for xx := ix.Bounds().Min.X; xx < ix.Bounds().Max.X; xx++ {
			if ix.At(xx, yy) != iy.At(xx, yy) {
				return false
			}
		}
	}
	return true
}
