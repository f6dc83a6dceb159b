package docid

import (
	"archive/zip"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var idPattern = regexp.MustCompile(`^HASH-[0-9A-F]{8}$`)

// FuzzIdentify feeds arbitrary bytes (seeded with stored, uncompressed
// packages so that mutations reach the XML), checks the invariants of the
// identity and, when Stamp accepts the package, that the stamped package
// is identified by its metadata.
func FuzzIdentify(f *testing.F) {
	f.Add(buildZip(f, zip.Store, part{documentPart, testDocument},
		part{settingsPart, settingsXML("{" + vectorGUID + "}")}, part{corePart, coreXML(vectorCreated)}))
	f.Add(buildZip(f, zip.Store, part{documentPart, testDocument}, part{customPart, customXML("G")}, part{corePart, coreXML("")}))
	f.Add(buildDocx(f))
	if small, _ := os.ReadFile(filepath.Join(corpusDir, "mammoth__utf8-bom.docx")); small != nil {
		f.Add(small)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := Identify(data)
		if err != nil {
			if !errors.Is(err, ErrNotDOCX) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if !idPattern.MatchString(id.ID) || id.GUID == "" || id.Created == "" {
			t.Fatalf("bad identity %+v", id)
		}
		want := FromMetadata(id.GUID, id.Created)
		if id.Generated {
			want = FromContent(data)
		}
		if id.ID != want {
			t.Fatalf("ID %s, want %s (%+v)", id.ID, want, id)
		}
		out, err := Stamp(data, id)
		if err != nil {
			return
		}
		again, err := Identify(out)
		if err != nil || again.Generated || again.GUID != id.GUID || again.Created != id.Created {
			t.Fatalf("stamped package identified as %+v (%v), want GUID %q and Created %q", again, err, id.GUID, id.Created)
		}
	})
}

// FuzzStamp builds a package from arbitrary metadata parts and checks that
// whenever Stamp succeeds, the result is identified by the stamped metadata.
func FuzzStamp(f *testing.F) {
	f.Add(settingsXML("{G}"), customXML("G"), coreXML("T"), testContentTypes, testRels, "g", "c")
	f.Add("", "", "", testContentTypes, testRels, "g", "c")
	f.Add("", `<op:Properties xmlns:op="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties"/>`,
		`<cp:coreProperties xmlns:cp="x"><dcterms:created xmlns:dcterms="http://purl.org/dc/terms/"/></cp:coreProperties>`,
		`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`, `<r:Relationships xmlns:r="http://schemas.openxmlformats.org/package/2006/relationships"/>`,
		"0f8fad5b-d9cb-469f-a165-70867728950e", "2024-01-15T10:30:00Z")
	f.Fuzz(func(t *testing.T, settings, custom, core, types, rels, guid, created string) {
		parts := []part{{documentPart, testDocument}}
		for _, p := range []part{{settingsPart, settings}, {customPart, custom}, {corePart, core},
			{contentTypesPart, types}, {packageRelsPart, rels}} {
			if p.body != "" {
				parts = append(parts, p)
			}
		}
		docx := buildZip(t, zip.Deflate, parts...)
		out, err := Stamp(docx, Identity{GUID: guid, Created: created})
		if err != nil {
			return
		}
		id, err := Identify(out)
		if err != nil {
			t.Fatalf("stamped package not identified: %v", err)
		}
		if id.Generated || id.GUID != guid || id.Created != created {
			t.Fatalf("stamped package identified as %+v, want GUID %q and Created %q", id, guid, created)
		}
	})
}
