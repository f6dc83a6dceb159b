package annotate

import (
	"context"
	"errors"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/annotate/annotatetest"
	"github.com/quire-dev/quire/internal/ooxml"
)

// FuzzFill puts arbitrary main documents (seeded with the demo template's)
// into a package and fills them with every field type: the answer is a
// client error of the contract, or a package whose main document is still
// well-formed XML.
func FuzzFill(f *testing.F) {
	tmpl := annotatetest.Template()
	doc, _ := mustOpen(f, tmpl).Read(documentPart)
	f.Add(doc)
	e := newTestEngine(f, nil)
	fields := append(demoFields(),
		Field{Group: "g", Type: TypeImage, Value: pngDataURI(f, 4, 2)},
		Field{ID: annotatetest.NameID, Type: TypeTable, Rows: [][]string{{"a", "b"}, {"c"}}})
	f.Fuzz(func(t *testing.T, data []byte) {
		docx := withPart(t, tmpl, documentPart, data)
		out, _, err := e.Fill(context.Background(), docx, fields)
		if err != nil {
			var qe *quire.Error
			if !errors.As(err, &qe) || statusClass(qe.Code) != 4 {
				t.Fatalf("not a client error: %v", err)
			}
			return
		}
		filled, err := mustOpen(t, out).Read(documentPart)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ooxml.Parse(filled, ooxml.XMLLimits{}); err != nil {
			t.Fatalf("the filled document is not well-formed: %v\n%s", err, filled)
		}
	})
}

// statusClass is the hundreds digit of the HTTP status of an error code.
func statusClass(code string) int {
	switch code {
	case quire.CodeValidation, quire.CodeInvalidFormat, quire.CodePayloadTooLarge, quire.CodeUnprocessable:
		return 4
	}
	return 5
}
