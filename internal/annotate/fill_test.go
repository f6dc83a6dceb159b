package annotate

import (
	"context"
	"strings"
	"testing"
)

func TestFillSmoke(t *testing.T) {
	e := newTestEngine(t, nil)
	doc := fixture(t, "synthetic-sc-template.docx")
	out, rep, err := e.Fill(context.Background(), doc, []Field{
		{ID: "-436595273", Type: TypeText, Value: "Jane Doe", Options: Options{KeepTextNodeStyles: true}},
		{Group: "company", Type: TypeText, Value: "ACME Inc", Options: Options{KeepTextNodeStyles: true}},
		{ID: "777", Type: TypeImage, Value: pngDataURI(t, 150, 80)},
		{ID: "-22177123", Type: TypeTable, Rows: [][]string{{"X1", "Y1"}, {"X2", "Y2"}}},
		{ID: "nope", Type: TypeText, Value: "x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
	d := entries(t, out)
	s := string(d["word/document.xml"])
	i := strings.Index(s, "<w:body>")
	t.Log(s[i:])
	t.Log(string(d["word/_rels/document.xml.rels"]))
	t.Log(string(d["[Content_Types].xml"]))
}
