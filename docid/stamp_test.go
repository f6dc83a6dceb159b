package docid

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const corpusDir = "../../shared/corpus/docx"

// TestStampCorpus stamps every corpus document and checks that the result
// is a valid ZIP, is identified by its metadata from then on, and differs
// from the original only in the metadata parts.
func TestStampCorpus(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.docx"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skipf("no DOCX corpus at %s (shared/ checkout beside the repository); skipping", corpusDir)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			docx, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkStampRoundTrip(t, docx)
		})
	}
}

func checkStampRoundTrip(t *testing.T, docx []byte) {
	t.Helper()
	id, err := Identify(docx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Stamp(docx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !id.Generated && !bytes.Equal(out, docx) {
		t.Error("Stamp changed a package that already had its metadata")
	}
	checkUntouched(t, docx, out)

	want := FromMetadata(id.GUID, id.Created)
	again, err := Identify(out)
	if err != nil {
		t.Fatal(err)
	}
	if again != (Identity{ID: want, GUID: id.GUID, Created: id.Created}) {
		t.Fatalf("stamped package identified as %+v, want ID %s from %+v", again, want, id)
	}
	restamped, err := Stamp(out, again)
	if err != nil || !bytes.Equal(restamped, out) {
		t.Errorf("stamping again changed the package (err %v)", err)
	}
	edited := replaceEntry(t, out, documentPart, testDocument)
	if after, err := Identify(edited); err != nil || after.ID != want {
		t.Errorf("after a content edit: %+v, %v; want ID %s", after, err, want)
	}
}

// checkUntouched checks that out opens with archive/zip, that every entry
// decompresses, and that entries other than the metadata parts are
// byte-identical to those of in, in the same order, with only metadata parts appended.
func checkUntouched(t *testing.T, in, out []byte) {
	t.Helper()
	editable := map[string]bool{customPart: true, corePart: true, contentTypesPart: true, packageRelsPart: true}
	zin, err := zip.NewReader(bytes.NewReader(in), int64(len(in)))
	if err != nil {
		t.Fatal(err)
	}
	zout, err := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatalf("stamped package does not open: %v", err)
	}
	if zout.Comment != zin.Comment {
		t.Errorf("comment %q, was %q", zout.Comment, zin.Comment)
	}
	if len(zout.File) < len(zin.File) {
		t.Fatalf("stamped package has %d entries, original %d", len(zout.File), len(zin.File))
	}
	for i, f := range zout.File {
		if err := readAll(f); err != nil {
			t.Errorf("entry %s: %v", f.Name, err)
		}
		if i >= len(zin.File) {
			if !editable[f.Name] {
				t.Errorf("unexpected new entry %s", f.Name)
			}
			continue
		}
		g := zin.File[i]
		if f.Name != g.Name {
			t.Fatalf("entry %d is %s, was %s", i, f.Name, g.Name)
		}
		if editable[f.Name] {
			continue
		}
		if f.CRC32 != g.CRC32 || f.Method != g.Method || f.ModifiedDate != g.ModifiedDate ||
			f.ModifiedTime != g.ModifiedTime || !bytes.Equal(rawBytes(t, f), rawBytes(t, g)) {
			t.Errorf("entry %s changed", f.Name)
		}
	}
}

func readAll(f *zip.File) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err
}

func rawBytes(t *testing.T, f *zip.File) []byte {
	t.Helper()
	r, err := f.OpenRaw()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replaceEntry returns the package with one entry's content replaced.
func replaceEntry(t *testing.T, docx []byte, name, body string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(docx), int64(len(docx)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if f.Name != name {
			if err := w.Copy(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := writeEntry(w, &zip.FileHeader{Name: name, Method: zip.Deflate}, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// entry returns the content of one entry of a package.
func entry(t *testing.T, docx []byte, name string) string {
	t.Helper()
	p, err := openPackage(docx)
	if err != nil {
		t.Fatal(err)
	}
	data, err := p.read(name)
	if err != nil || data == nil {
		t.Fatalf("reading %s: %v (present: %v)", name, err, data != nil)
	}
	return string(data)
}

func TestStampEdits(t *testing.T) {
	t.Parallel()
	id := Identity{GUID: "0f8fad5b-d9cb-469f-a165-70867728950e", Created: "2024-01-15T10:30:00Z"}
	const props = `<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">`
	tests := []struct {
		name  string
		parts []part
		check map[string][]string // part -> substrings its stamped content must hold
	}{
		{
			name:  "custom and core parts created",
			parts: nil,
			check: map[string][]string{
				customPart:       {`pid="2" name="DocumentGuid"><vt:lpwstr>` + id.GUID + `</vt:lpwstr>`, `fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}"`},
				corePart:         {`<dcterms:created xsi:type="dcterms:W3CDTF">2024-01-15T10:30:00Z</dcterms:created>`},
				contentTypesPart: {`<Override PartName="/docProps/custom.xml" ContentType="application/vnd.openxmlformats-officedocument.custom-properties+xml"/>`, `<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>`},
				packageRelsPart:  {`Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/custom-properties" Target="docProps/custom.xml"/>`, `Id="rId3" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>`},
			},
		},
		{
			name: "next free pid after existing properties",
			parts: []part{{customPart, props + `<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="2" name="A"><vt:lpwstr>a</vt:lpwstr></property>` +
				`<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="7" name="B"><vt:i4>1</vt:i4></property></Properties>`},
				{corePart, coreXML(id.Created)}},
			check: map[string][]string{customPart: {`name="A"><vt:lpwstr>a</vt:lpwstr></property><property`, `pid="8" name="DocumentGuid"`}},
		},
		{
			name: "empty DocumentGuid replaced in place",
			parts: []part{{customPart, props + `<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="3" name="DocumentGuid"><vt:lpwstr></vt:lpwstr></property>` +
				`<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="4" name="Z"><vt:lpwstr>z</vt:lpwstr></property></Properties>`}},
			check: map[string][]string{customPart: {props + `<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="3" name="DocumentGuid"><vt:lpwstr>` + id.GUID + `</vt:lpwstr></property><property`}},
		},
		{
			name:  "self-closing prefixed root gets declarations",
			parts: []part{{customPart, `<op:Properties xmlns:op="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties"/>`}},
			check: map[string][]string{customPart: {`<op:Properties xmlns:op="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties"><property xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes" fmtid=`, `</property></op:Properties>`}},
		},
		{
			name:  "empty created replaced, other core properties kept",
			parts: []part{{customPart, customXML(id.GUID)}, {corePart, strings.Replace(coreXML(""), "></dcterms:created>", "/>", 1)}},
			check: map[string][]string{corePart: {`<dc:creator>someone</dc:creator><dcterms:created xsi:type="dcterms:W3CDTF">2024-01-15T10:30:00Z</dcterms:created></cp:coreProperties>`}},
		},
		{
			name:  "core root without dcterms and xsi declarations",
			parts: []part{{customPart, customXML(id.GUID)}, {corePart, `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"></cp:coreProperties>`}},
			check: map[string][]string{corePart: {`<dcterms:created xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="dcterms:W3CDTF">`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docx := buildDocx(t, tt.parts...)
			out, err := Stamp(docx, id)
			if err != nil {
				t.Fatal(err)
			}
			checkUntouched(t, docx, out)
			for name, wants := range tt.check {
				got := entry(t, out, name)
				for _, w := range wants {
					if !strings.Contains(got, w) {
						t.Errorf("%s lacks %s:\n%s", name, w, got)
					}
				}
			}
			got, err := Identify(out)
			if err != nil || got.ID != FromMetadata(id.GUID, id.Created) || got.Generated {
				t.Errorf("stamped package identified as %+v, %v", got, err)
			}
		})
	}
}

func TestStampDoesNotRepeatRegistrations(t *testing.T) {
	t.Parallel()
	ct := strings.Replace(testContentTypes, "</Types>", `<Override PartName="/docProps/custom.xml" ContentType="x"/></Types>`, 1)
	rels := strings.Replace(testRels, "</Relationships>", `<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>`, 1)
	docx := buildZip(t, zip.Deflate, part{contentTypesPart, ct}, part{packageRelsPart, rels}, part{documentPart, testDocument})
	out, err := Stamp(docx, Identity{GUID: "g", Created: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if got := entry(t, out, contentTypesPart); strings.Count(got, "/docProps/custom.xml") != 1 || strings.Count(got, "/docProps/core.xml") != 1 {
		t.Errorf("content types:\n%s", got)
	}
	if got := entry(t, out, packageRelsPart); strings.Count(got, "docProps/custom.xml") != 1 || strings.Count(got, "docProps/core.xml") != 1 ||
		!strings.Contains(got, `Id="rId3"`) {
		t.Errorf("relationships:\n%s", got)
	}
}

func TestStampEscapes(t *testing.T) {
	t.Parallel()
	id := Identity{GUID: `a<b>&"c'`, Created: "x\r\ny\tz"}
	out, err := Stamp(buildDocx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Identify(out)
	if err != nil || got.GUID != id.GUID || got.Created != id.Created {
		t.Errorf("got %+v, %v; want %+v", got, err, id)
	}
}

func TestStampErrors(t *testing.T) {
	t.Parallel()
	good := Identity{GUID: "g", Created: "c"}
	tests := []struct {
		name string
		docx []byte
		id   Identity
		want string
	}{
		{"no GUID", buildDocx(t), Identity{Created: "c"}, "needs both"},
		{"no created", buildDocx(t), Identity{GUID: "g"}, "needs both"},
		{"character XML cannot hold", buildDocx(t), Identity{GUID: "g\x00", Created: "c"}, "cannot carry"},
		{"invalid UTF-8", buildDocx(t), Identity{GUID: "g", Created: "\xff"}, "cannot carry"},
		{"settings GUID takes precedence", buildDocx(t, part{settingsPart, settingsXML("{OTHER}")}), good, "takes precedence"},
		{"malformed custom part", buildDocx(t, part{customPart, "<Properties>"}), good, "docProps/custom.xml is not well-formed"},
		{"malformed core part", buildDocx(t, part{customPart, customXML("g")}, part{corePart, "<a></b>"}), good, "docProps/core.xml is not well-formed"},
		{"no content types", buildZip(t, zip.Deflate, part{packageRelsPart, testRels}, part{documentPart, testDocument}), good, "no [Content_Types].xml"},
		{"malformed relationships", buildZip(t, zip.Deflate, part{contentTypesPart, testContentTypes}, part{packageRelsPart, "<"}, part{documentPart, testDocument}), good, "_rels/.rels is not well-formed"},
		{"not a ZIP", []byte("plain text"), good, ErrNotDOCX.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Stamp(tt.docx, tt.id)
			if err == nil || !strings.Contains(err.Error(), tt.want) || out != nil {
				t.Errorf("got %v (output %d bytes), want error containing %q", err, len(out), tt.want)
			}
		})
	}
}

func TestStampKeepsCommentAndDuplicates(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, p := range []part{{contentTypesPart, testContentTypes}, {packageRelsPart, testRels}, {documentPart, testDocument},
		{corePart, coreXML("")}, {corePart, coreXML("second")}} {
		if err := writeEntry(w, &zip.FileHeader{Name: p.name, Method: zip.Store}, []byte(p.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetComment("kept"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := Stamp(buf.Bytes(), Identity{GUID: "g", Created: "c"})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Comment != "kept" || zr.File[3].Method != zip.Store || zr.File[4].Name != corePart {
		t.Errorf("comment %q, entries %v", zr.Comment, zr.File)
	}
	if !bytes.Equal(rawBytes(t, zr.File[4]), []byte(coreXML("second"))) {
		t.Error("second duplicate entry changed")
	}
	if id, err := Identify(out); err != nil || id.Created != "c" {
		t.Errorf("got %+v, %v", id, err)
	}
}
