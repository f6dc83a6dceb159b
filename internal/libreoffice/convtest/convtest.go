// Package convtest makes small documents of each format the conversion
// engine takes, for the tests and the benchmark: written here, so that
// they need no corpus, with a known text on each page.
package convtest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"html"
	"io"
	"strings"

	"github.com/quire-dev/quire/internal/ooxml"
)

// A ZIP package is written part by part, in order.
type part struct{ name, body string }

// pack writes parts into a ZIP package. An ODF mimetype part is stored
// uncompressed, as the format asks, and with its sizes and checksum in
// its header rather than in a data descriptor after it: LibreOffice 25.2
// takes a stored entry with a data descriptor for a damaged package (it
// then refuses an ODP, and waits on an ODS for an answer to its repair
// question until the job's time limit).
func pack(parts []part) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, p := range parts {
		if p.name == "mimetype" {
			n := uint64(len(p.body))
			w, _ := z.CreateRaw(&zip.FileHeader{Name: p.name, Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte(p.body)),
				CompressedSize64: n, UncompressedSize64: n})
			io.WriteString(w, p.body)
			continue
		}
		w, _ := z.CreateHeader(&zip.FileHeader{Name: p.name, Method: zip.Deflate}) // writes to memory: cannot fail
		io.WriteString(w, p.body)
	}
	z.Close()
	return b.Bytes()
}

const xmlHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

// CSV returns a table of rows rows and three columns: a header, then
// "row N" with two numbers.
func CSV(rows int) []byte {
	var b strings.Builder
	b.WriteString("name,value,square\n")
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&b, "row %d,%d,%d\n", i, i, i*i)
	}
	return []byte(b.String())
}

// DOCX returns a document of pages pages, each a heading ("Page N") and
// paragraphs of plain text that fill it, with a page break between pages.
func DOCX(pages int) []byte {
	const nsW = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`
	var body strings.Builder
	line := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 8)
	for i := 1; i <= pages; i++ {
		if i > 1 {
			body.WriteString(`<w:p><w:r><w:br w:type="page"/></w:r></w:p>`)
		}
		fmt.Fprintf(&body, `<w:p><w:r><w:rPr><w:b/><w:sz w:val="32"/></w:rPr><w:t>Page %d</w:t></w:r></w:p>`, i)
		for range 9 {
			body.WriteString(`<w:p><w:r><w:t>` + line + `</w:t></w:r></w:p>`)
		}
	}
	return pack([]part{
		{"[Content_Types].xml", xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"_rels/.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/document.xml", xmlHead + `<w:document ` + nsW + `><w:body>` + body.String() +
			`<w:sectPr><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="720" w:footer="720" w:gutter="0"/></w:sectPr></w:body></w:document>`},
	})
}

// XLSX returns a workbook of one sheet holding the table CSV(rows) holds.
func XLSX(rows int) []byte {
	var sheet strings.Builder
	sheet.WriteString(xmlHead + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`)
	cell := func(ref, text string) string {
		return fmt.Sprintf(`<c r="%s" t="inlineStr"><is><t>%s</t></is></c>`, ref, html.EscapeString(text))
	}
	num := func(ref string, v int) string { return fmt.Sprintf(`<c r="%s"><v>%d</v></c>`, ref, v) }
	fmt.Fprintf(&sheet, `<row r="1">%s%s%s</row>`, cell("A1", "name"), cell("B1", "value"), cell("C1", "square"))
	for i := 1; i <= rows; i++ {
		r := i + 1
		fmt.Fprintf(&sheet, `<row r="%d">%s%s%s</row>`, r, cell(fmt.Sprintf("A%d", r), fmt.Sprintf("row %d", i)), num(fmt.Sprintf("B%d", r), i), num(fmt.Sprintf("C%d", r), i*i))
	}
	sheet.WriteString(`</sheetData></worksheet>`)
	return pack([]part{
		{"[Content_Types].xml", xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`},
		{"_rels/.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
		{"xl/workbook.xml", xmlHead + `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Table" sheetId="1" r:id="rId1"/></sheets></workbook>`},
		{"xl/_rels/workbook.xml.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`},
		{"xl/worksheets/sheet1.xml", sheet.String()},
	})
}

// PPTX returns a presentation of the given number of slides, slide N
// titled "Slide N".
func PPTX(slides int) []byte {
	const (
		nsP = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`
		rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
		ct  = "application/vnd.openxmlformats-officedocument.presentationml."
	)
	types := `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
		`<Override PartName="/ppt/presentation.xml" ContentType="` + ct + `presentation.main+xml"/>` +
		`<Override PartName="/ppt/slideMasters/slideMaster1.xml" ContentType="` + ct + `slideMaster+xml"/>` +
		`<Override PartName="/ppt/slideLayouts/slideLayout1.xml" ContentType="` + ct + `slideLayout+xml"/>` +
		`<Override PartName="/ppt/theme/theme1.xml" ContentType="application/vnd.openxmlformats-officedocument.theme+xml"/>`
	presRels := `<Relationship Id="rId1" Type="` + rel + `slideMaster" Target="slideMasters/slideMaster1.xml"/><Relationship Id="rId2" Type="` + rel + `theme" Target="theme/theme1.xml"/>`
	var ids strings.Builder
	var parts []part
	for i := 1; i <= slides; i++ {
		types += fmt.Sprintf(`<Override PartName="/ppt/slides/slide%d.xml" ContentType="%sslide+xml"/>`, i, ct)
		presRels += fmt.Sprintf(`<Relationship Id="rId%d" Type="%sslide" Target="slides/slide%d.xml"/>`, i+2, rel, i)
		fmt.Fprintf(&ids, `<p:sldId id="%d" r:id="rId%d"/>`, 255+i, i+2)
		parts = append(parts,
			part{fmt.Sprintf("ppt/slides/slide%d.xml", i), xmlHead + `<p:sld ` + nsP + `><p:cSld><p:spTree>` + emptyGroup +
				fmt.Sprintf(`<p:sp><p:nvSpPr><p:cNvPr id="2" name="Title"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="838200" y="365125"/><a:ext cx="10515600" cy="1325563"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr><p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US" sz="4400"/><a:t>Slide %d</a:t></a:r></a:p></p:txBody></p:sp>`, i) +
				`</p:spTree></p:cSld></p:sld>`},
			part{fmt.Sprintf("ppt/slides/_rels/slide%d.xml.rels", i), xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="` + rel + `slideLayout" Target="../slideLayouts/slideLayout1.xml"/></Relationships>`})
	}
	return pack(append([]part{
		{"[Content_Types].xml", xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` + types + `</Types>`},
		{"_rels/.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="` + rel + `officeDocument" Target="ppt/presentation.xml"/></Relationships>`},
		{"ppt/presentation.xml", xmlHead + `<p:presentation ` + nsP + `><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst>` + ids.String() + `</p:sldIdLst><p:sldSz cx="12192000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>`},
		{"ppt/_rels/presentation.xml.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + presRels + `</Relationships>`},
		{"ppt/slideMasters/slideMaster1.xml", xmlHead + `<p:sldMaster ` + nsP + `><p:cSld><p:spTree>` + emptyGroup + `</p:spTree></p:cSld><p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/><p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>`},
		{"ppt/slideMasters/_rels/slideMaster1.xml.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="` + rel + `slideLayout" Target="../slideLayouts/slideLayout1.xml"/><Relationship Id="rId2" Type="` + rel + `theme" Target="../theme/theme1.xml"/></Relationships>`},
		{"ppt/slideLayouts/slideLayout1.xml", xmlHead + `<p:sldLayout ` + nsP + ` type="blank"><p:cSld name="Blank"><p:spTree>` + emptyGroup + `</p:spTree></p:cSld></p:sldLayout>`},
		{"ppt/slideLayouts/_rels/slideLayout1.xml.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="` + rel + `slideMaster" Target="../slideMasters/slideMaster1.xml"/></Relationships>`},
		{"ppt/theme/theme1.xml", xmlHead + theme},
	}, parts...))
}

// emptyGroup is the group properties every shape tree starts with.
const emptyGroup = `<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>`

// theme is a minimal DrawingML theme: colours, fonts and the format
// scheme a presentation's master refers to.
const theme = `<a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="Plain"><a:themeElements>` +
	`<a:clrScheme name="Plain"><a:dk1><a:srgbClr val="000000"/></a:dk1><a:lt1><a:srgbClr val="FFFFFF"/></a:lt1><a:dk2><a:srgbClr val="1F1F1F"/></a:dk2><a:lt2><a:srgbClr val="EEEEEE"/></a:lt2>` +
	`<a:accent1><a:srgbClr val="4472C4"/></a:accent1><a:accent2><a:srgbClr val="ED7D31"/></a:accent2><a:accent3><a:srgbClr val="A5A5A5"/></a:accent3><a:accent4><a:srgbClr val="FFC000"/></a:accent4><a:accent5><a:srgbClr val="5B9BD5"/></a:accent5><a:accent6><a:srgbClr val="70AD47"/></a:accent6>` +
	`<a:hlink><a:srgbClr val="0563C1"/></a:hlink><a:folHlink><a:srgbClr val="954F72"/></a:folHlink></a:clrScheme>` +
	`<a:fontScheme name="Plain"><a:majorFont><a:latin typeface="Liberation Sans"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont><a:minorFont><a:latin typeface="Liberation Sans"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme>` +
	`<a:fmtScheme name="Plain"><a:fillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:fillStyleLst>` +
	`<a:lnStyleLst><a:ln w="6350"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln><a:ln w="12700"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln><a:ln w="19050"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln></a:lnStyleLst>` +
	`<a:effectStyleLst><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle></a:effectStyleLst>` +
	`<a:bgFillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:bgFillStyleLst></a:fmtScheme>` +
	`</a:themeElements></a:theme>`

// ODS returns an OpenDocument spreadsheet holding the table CSV(rows)
// holds.
func ODS(rows int) []byte {
	var b strings.Builder
	row := func(cells ...string) {
		b.WriteString("<table:table-row>")
		for _, c := range cells {
			fmt.Fprintf(&b, `<table:table-cell office:value-type="string"><text:p>%s</text:p></table:table-cell>`, html.EscapeString(c))
		}
		b.WriteString("</table:table-row>")
	}
	row("name", "value", "square")
	for i := 1; i <= rows; i++ {
		row(fmt.Sprintf("row %d", i), fmt.Sprint(i), fmt.Sprint(i*i))
	}
	return odf("spreadsheet", `<office:spreadsheet><table:table table:name="Table"><table:table-column table:number-columns-repeated="3"/>`+b.String()+`</table:table></office:spreadsheet>`)
}

// ODP returns an OpenDocument presentation of the given number of
// slides, slide N reading "Slide N".
func ODP(slides int) []byte {
	var b strings.Builder
	for i := 1; i <= slides; i++ {
		fmt.Fprintf(&b, `<draw:page draw:name="page%d" draw:master-page-name="Default"><draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" svg:height="3cm"><draw:text-box><text:p>Slide %d</text:p></draw:text-box></draw:frame></draw:page>`, i, i)
	}
	return odf("presentation", `<office:presentation>`+b.String()+`</office:presentation>`)
}

// odf packs the body of an OpenDocument of the given kind
// ("spreadsheet", "presentation") with its mimetype and manifest.
func odf(kind, body string) []byte {
	mime := "application/vnd.oasis.opendocument." + kind
	styles := ""
	if kind == "presentation" {
		styles = `<office:master-styles><style:master-page style:name="Default"/></office:master-styles>`
	}
	const ns = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" office:version="1.2"`
	return pack([]part{
		{"mimetype", mime},
		{"META-INF/manifest.xml", xmlHead + `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" manifest:media-type="` + mime + `"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/><manifest:file-entry manifest:full-path="styles.xml" manifest:media-type="text/xml"/></manifest:manifest>`},
		{"styles.xml", xmlHead + `<office:document-styles ` + ns + `>` + styles + `</office:document-styles>`},
		{"content.xml", xmlHead + `<office:document-content ` + ns + `><office:body>` + body + `</office:body></office:document-content>`},
	})
}

// DOCXBody builds a DOCX package whose body is bodyXML and whose document
// relationships are relsXML (both may be empty).
func DOCXBody(bodyXML, relsXML string) []byte {
	return DOCXWith(bodyXML, relsXML, nil)
}

// Commented adds a comment on a word to a DOCX body, with the part and
// relationship it needs; use with DOCXWith.
func Commented(bodyXML, relsXML string) (string, string, map[string]string) {
	body := `<w:p><w:commentRangeStart w:id="0"/><w:r><w:t>commented</w:t></w:r><w:commentRangeEnd w:id="0"/><w:r><w:commentReference w:id="0"/></w:r></w:p>` + bodyXML
	rels := `<Relationship Id="rIdC" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments" Target="comments.xml"/>` + relsXML
	return body, rels, map[string]string{"word/comments.xml": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:comments xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:comment w:id="0" w:author="A" w:date="2024-01-15T10:30:00Z" w:initials="A"><w:p><w:r><w:t>a remark</w:t></w:r></w:p></w:comment></w:comments>`}
}

// DocumentHead and DocumentTail wrap the body XML of DOCXBody's document.xml.
const (
	DocumentHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><w:body>`
	DocumentTail = `</w:body></w:document>`
)

// DOCXWith is DOCXBody with extra parts.
func DOCXWith(bodyXML, relsXML string, extra map[string]string) []byte {
	parts := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"_rels/.rels": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
		"word/_rels/document.xml.rels": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + relsXML + `</Relationships>`,
		"word/document.xml": DocumentHead + bodyXML + DocumentTail,
	}
	for name, body := range extra {
		parts[name] = body
	}
	return Zip(parts)
}

// Zip writes parts, by name, into a ZIP archive.
func Zip(parts map[string]string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for name, body := range parts {
		w, err := z.Create(name)
		if err != nil {
			panic(err)
		}
		io.WriteString(w, body)
	}
	if err := z.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// Paragraphs returns n paragraphs of body XML.
func Paragraphs(n int, text string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "<w:p><w:r><w:t>%d. %s</w:t></w:r></w:p>", i+1, text)
	}
	return b.String()
}

// CFB builds a compound file (version 3, 512-byte sectors) holding the
// given streams, each padded to 4096 bytes so that it lives in regular
// sectors. Enough for sniffing tests; not a general writer.
func CFB(streams []string, contents map[string][]byte) []byte {
	const sec = 512
	le := binary.LittleEndian
	var data [][]byte // stream sectors, in order
	starts := make([]uint32, len(streams))
	next := uint32(2) // sector 0 is the FAT, sector 1 the directory
	fat := []uint32{0xFFFFFFFD, 0xFFFFFFFE}
	for i, name := range streams {
		body := append([]byte(nil), contents[name]...)
		body = append(body, make([]byte, max(0, 4096-len(body)))...)
		starts[i] = next
		for off := 0; off < len(body); off += sec {
			chunk := make([]byte, sec)
			copy(chunk, body[off:])
			data = append(data, chunk)
			if off+sec < len(body) {
				fat = append(fat, next+1)
			} else {
				fat = append(fat, 0xFFFFFFFE)
			}
			next++
		}
	}
	header := make([]byte, sec)
	copy(header, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}) // the signature
	le.PutUint16(header[0x18:], 0x3E)
	le.PutUint16(header[0x1A:], 3)
	le.PutUint16(header[0x1C:], 0xFFFE)
	le.PutUint16(header[0x1E:], 9)
	le.PutUint16(header[0x20:], 6)
	le.PutUint32(header[0x2C:], 1)          // one FAT sector
	le.PutUint32(header[0x30:], 1)          // directory at sector 1
	le.PutUint32(header[0x38:], 4096)       // mini stream cutoff
	le.PutUint32(header[0x3C:], 0xFFFFFFFE) // no mini FAT
	le.PutUint32(header[0x44:], 0xFFFFFFFE) // no DIFAT sectors
	for i := range 109 {                    // the DIFAT entries of the header
		le.PutUint32(header[0x4C+4*i:], 0xFFFFFFFF)
	}
	le.PutUint32(header[0x4C:], 0) // the FAT is sector 0
	fatSec := make([]byte, sec)
	for i := range sec / 4 {
		v := uint32(0xFFFFFFFF)
		if i < len(fat) {
			v = fat[i]
		}
		le.PutUint32(fatSec[4*i:], v)
	}
	dir := make([]byte, sec)
	entry := func(i int, name string, kind byte, start uint32, size uint64) {
		e := dir[i*128 : (i+1)*128] // a directory entry
		u := []rune(name)
		for j, r := range u {
			le.PutUint16(e[2*j:], uint16(r))
		}
		le.PutUint16(e[0x40:], uint16(2*len(u)+2))
		e[0x42] = kind
		le.PutUint32(e[0x44:], 0xFFFFFFFF) // siblings and child: none
		le.PutUint32(e[0x48:], 0xFFFFFFFF)
		le.PutUint32(e[0x4C:], 0xFFFFFFFF)
		le.PutUint32(e[0x74:], start)
		le.PutUint64(e[0x78:], size)
	}
	entry(0, "Root Entry", 5, 0xFFFFFFFE, 0)
	for i, name := range streams {
		entry(i+1, name, 2, starts[i], uint64(max(4096, len(contents[name]))))
	}
	out := append(append(header, fatSec...), dir...)
	for _, d := range data {
		out = append(out, d...)
	}
	return out
}

// WithRepeatedPart returns the package pkg with the part name holding
// head, unit copies times, and tail.
func WithRepeatedPart(pkg []byte, name, head, unit string, copies int, tail string) []byte {
	data, crc, size := RepeatedDeflate([]byte(head), []byte(unit), copies, []byte(tail))
	return PackageWith(pkg, &zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(len(data)), UncompressedSize64: size}, data)
}

// RepeatedDeflate returns the deflate stream of head, unit copies times,
// and tail, with its checksum and inflated size. The stream is unit's
// compressed blocks repeated (each copy's blocks refer to nothing before
// them), so that it takes a fraction of a second to make however large it
// inflates: deflating the whole under the race detector took minutes.
func RepeatedDeflate(head, unit []byte, copies int, tail []byte) (data []byte, crc uint32, size uint64) {
	var b bytes.Buffer
	b.Write(deflateBlocks(head))
	crc = crc32.ChecksumIEEE(head)
	block := deflateBlocks(unit)
	for range copies {
		b.Write(block)
		crc = crc32.Update(crc, crc32.IEEETable, unit)
	}
	b.Write(deflateBlocks(tail))
	crc = crc32.Update(crc, crc32.IEEETable, tail)
	b.Write([]byte{0x03, 0x00}) // an empty final block
	return b.Bytes(), crc, uint64(len(head) + copies*len(unit) + len(tail))
}

// deflateBlocks compresses b into non-final deflate blocks that end on a
// byte boundary and refer to nothing before them.
func deflateBlocks(b []byte) []byte {
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, flate.BestCompression)
	w.Write(b)
	w.Flush()
	return out.Bytes()
}

// PackageWith returns the package pkg with the part h (raw, compressed
// data) in place of the part of the same name.
func PackageWith(pkg []byte, h *zip.FileHeader, data []byte) []byte {
	z, err := zip.NewReader(bytes.NewReader(pkg), int64(len(pkg)))
	if err != nil {
		panic(err)
	}
	var out bytes.Buffer
	w := zip.NewWriter(&out)
	for _, f := range z.File {
		if f.Name != h.Name {
			if err := w.Copy(f); err != nil {
				panic(err)
			}
		}
	}
	raw, err := w.CreateRaw(h)
	if err != nil {
		panic(err)
	}
	raw.Write(data)
	if err := w.Close(); err != nil {
		panic(err)
	}
	return out.Bytes()
}

// PartOf returns the part name of the package pkg.
func PartOf(pkg []byte, name string) string {
	z, err := ooxml.Open(pkg, ooxml.Limits{})
	if err != nil {
		panic(err)
	}
	return string(z.Head(name, 1<<20))
}

// DTDDocument is a DTD issue's document body: word/document.xml declaring
// an external DTD at url.
func DTDDocument(url string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE w:document SYSTEM "` + url + `">
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>external entity</w:t></w:r></w:p></w:body></w:document>`
}

// UTF16LE encodes s as UTF-16LE with a byte order mark (s is ASCII).
func UTF16LE(s string) string {
	b := []byte("\xff\xfe")
	for _, c := range []byte(s) {
		b = append(b, c, 0)
	}
	return string(b)
}
