package annotate

import (
	"context"
	"encoding/base64"
	"fmt"
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
