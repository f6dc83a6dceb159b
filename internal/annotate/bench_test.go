package annotate

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/quire-dev/quire/internal/annotate/annotatetest"
)

// BenchmarkFillDemo fills the e-sign demo's template as its server does.
func BenchmarkFillDemo(b *testing.B) {
	e := newTestEngine(b, nil)
	tmpl := annotatetest.Template()
	var fields []Field
	for _, f := range annotatetest.TextFields {
		fields = append(fields, Field{ID: f.ID, Type: TypeText, Value: "Bench " + f.Label, Options: Options{KeepTextNodeStyles: true}})
	}
	fields = append(fields, Field{ID: annotatetest.SignatureID, Type: TypeSignature,
		Value:   "data:image/png;base64," + base64.StdEncoding.EncodeToString(annotatetest.Signature()),
		Options: Options{BottomLabel: Label{Text: "ip: 127.0.0.1", Color: "#666"}}})
	for b.Loop() {
		if _, rep, err := e.Fill(context.Background(), tmpl, fields); err != nil || len(rep.Unmatched) > 0 {
			b.Fatal(err, rep)
		}
	}
}
