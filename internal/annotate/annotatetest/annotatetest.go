// Package annotatetest makes the inputs of the official e-sign demo's
// annotate call, for tests and benchmarks: a 1-page agreement template
// with the demo's seven content controls, and a drawn signature.
package annotatetest

import (
	"archive/zip"
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
)

// Field ids of the demo's template: six text fields and the signature.
const (
	DateID      = "123456"
	NameID      = "234567"
	CompanyID   = "345678"
	PlanID      = "456789"
	StateID     = "567890"
	AddressID   = "678901"
	SignatureID = "789012"
)

// TextFields are the demo's six text fields, label and id.
var TextFields = []struct{ Label, ID string }{
	{"Date", DateID}, {"Full name", NameID}, {"Company", CompanyID},
	{"Plan", PlanID}, {"State", StateID}, {"Address", AddressID},
}

const nsW = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// Template is the 1-page agreement: a title, one paragraph per text
// field ("Label: " and an inline control showing a placeholder), and the
// signature control.
func Template() []byte {
	var body strings.Builder
	para := func(inner string) { body.WriteString("<w:p>" + inner + "</w:p>") }
	run := func(text string) string { return `<w:r><w:t xml:space="preserve">` + text + `</w:t></w:r>` }
	control := func(id, placeholder string) string {
		return `<w:sdt><w:sdtPr><w:alias w:val="Field ` + id + `"/><w:id w:val="` + id + `"/><w:showingPlcHdr/></w:sdtPr>` +
			`<w:sdtContent><w:r><w:rPr><w:b/></w:rPr><w:t>` + placeholder + `</w:t></w:r></w:sdtContent></w:sdt>`
	}
	para(`<w:pPr><w:jc w:val="center"/></w:pPr><w:r><w:rPr><w:b/><w:sz w:val="36"/></w:rPr><w:t>Service agreement</w:t></w:r>`)
	para(run("This agreement is made between the provider and the customer named below."))
	for _, f := range TextFields {
		para(run(f.Label+": ") + control(f.ID, "["+f.Label+"]"))
	}
	para(run("Signature: ") + control(SignatureID, "[Sign here]"))
	return docx(body.String())
}

// TableID is the id of TableTemplate's table control.
const TableID = "890123"

// TableTemplate is a document holding one table control (TableID) whose
// table has cols columns and one template row.
func TableTemplate(cols int) []byte {
	var grid, cells strings.Builder
	for range cols {
		grid.WriteString(`<w:gridCol w:w="900"/>`)
		cells.WriteString(`<w:tc><w:tcPr><w:tcW w:w="900" w:type="dxa"/></w:tcPr><w:p><w:r><w:t>cell</w:t></w:r></w:p></w:tc>`)
	}
	return docx(`<w:sdt><w:sdtPr><w:alias w:val="Table"/><w:id w:val="` + TableID + `"/></w:sdtPr><w:sdtContent>` +
		`<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid>` + grid.String() + `</w:tblGrid>` +
		`<w:tr>` + cells.String() + `</w:tr></w:tbl></w:sdtContent></w:sdt><w:p/>`)
}

// docx is a minimal DOCX package whose body holds body.
func docx(body string) []byte {
	files := []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/_rels/document.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"></Relationships>`},
		{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="` + nsW + `"><w:body>` + body +
			`<w:sectPr><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="720" w:footer="720" w:gutter="0"/></w:sectPr></w:body></w:document>`},
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range files {
		fw, err := w.Create(f.name)
		if err != nil {
			panic(err)
		}
		fw.Write([]byte(f.body))
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// Signature is a drawn signature as the demo's canvas sends it: a 300 x
// 100 PNG, transparent, with a dark stroke.
func Signature() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 300, 100))
	ink := color.NRGBA{20, 20, 60, 255}
	for i := 0; i < 2000; i++ {
		t := float64(i) / 2000
		x := 20 + 260*t
		y := 50 + 25*math.Sin(t*4*math.Pi)*(1-t/2)
		for dx := -1; dx <= 1; dx++ {
			for dy := -1; dy <= 1; dy++ {
				img.Set(int(x)+dx, int(y)+dy, ink)
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}
