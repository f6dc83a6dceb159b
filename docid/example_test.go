package docid_test

import (
	"archive/zip"
	"bytes"
	"fmt"

	"github.com/quire-dev/quire/docid"
)

func ExampleFromMetadata() {
	fmt.Println(docid.FromMetadata("EXISTING-GUID-123", "2024-01-15T10:30:00Z"))
	// Output: HASH-A5FD6589
}

// A document without a GUID is identified by its content until it is
// stamped; afterwards its metadata identifies it.
func ExampleStamp() {
	docx := minimalDOCX()

	id, err := docid.Identify(docx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("generated:", id.Generated, "content hash:", id.ID == docid.FromContent(docx))

	stamped, err := docid.Stamp(docx, id)
	if err != nil {
		fmt.Println(err)
		return
	}
	again, err := docid.Identify(stamped)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("generated:", again.Generated, "metadata hash:", again.ID == docid.FromMetadata(id.GUID, id.Created))
	// Output:
	// generated: true content hash: true
	// generated: false metadata hash: true
}

// minimalDOCX builds the smallest package Stamp accepts.
func minimalDOCX() []byte {
	parts := []struct{ name, body string }{
		{"[Content_Types].xml", `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`},
		{"_rels/.rels", `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/document.xml", `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body/></w:document>`},
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, p := range parts {
		f, _ := w.Create(p.name)
		f.Write([]byte(p.body))
	}
	w.Close()
	return buf.Bytes()
}
