package docid

import (
	"archive/zip"
	"bytes"
	"testing"
)

// part is one entry of a package built by a test.
type part struct{ name, body string }

const (
	testDocument = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body></w:document>`
	testContentTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`
	testRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`
)

// settingsXML returns word/settings.xml declaring w15:docId val.
func settingsXML(val string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:settings xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:w15="http://schemas.microsoft.com/office/word/2012/wordml"><w:zoom w:percent="100"/><w15:docId w15:val="` + val + `"/></w:settings>`
}

// coreXML returns docProps/core.xml with dcterms:created set to created.
func coreXML(created string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:creator>someone</dc:creator><dcterms:created xsi:type="dcterms:W3CDTF">` + created + `</dcterms:created></cp:coreProperties>`
}

// customXML returns docProps/custom.xml holding a DocumentGuid property.
func customXML(guid string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="2" name="DocumentGuid"><vt:lpwstr>` + guid + `</vt:lpwstr></property></Properties>`
}

// buildZip writes the parts, in order, as a ZIP with the given method.
func buildZip(tb testing.TB, method uint16, parts ...part) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, p := range parts {
		fw, err := w.CreateHeader(&zip.FileHeader{Name: p.name, Method: method})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := fw.Write([]byte(p.body)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// buildDocx builds a minimal DOCX with the extra parts after the required ones.
func buildDocx(tb testing.TB, extra ...part) []byte {
	tb.Helper()
	parts := append([]part{
		{contentTypesPart, testContentTypes},
		{packageRelsPart, testRels},
		{documentPart, testDocument},
	}, extra...)
	return buildZip(tb, zip.Deflate, parts...)
}
