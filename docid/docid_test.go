package docid

import (
	"regexp"
	"testing"
	"time"
)

func TestVectors(t *testing.T) {
	t.Parallel()
	tests := []struct{ got, want string }{
		{FromMetadata("EXISTING-GUID-123", "2024-01-15T10:30:00Z"), "HASH-A5FD6589"},
		{FromMetadata("1B2C3D4E-5F60-4A7B-8C9D-0E1F2A3B4C5D", "2024-01-15T10:30:00Z"), "HASH-8F81172B"},
		{FromContent([]byte("test file content")), "HASH-61D1432F"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}

var (
	generatedGUID    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	generatedCreated = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$`)
)

const (
	vectorGUID    = "1B2C3D4E-5F60-4A7B-8C9D-0E1F2A3B4C5D"
	vectorCreated = "2024-01-15T10:30:00Z"
	vectorID      = "HASH-8F81172B"
)

func TestIdentify(t *testing.T) {
	t.Parallel()
	const gen = "(generated)"
	tests := []struct {
		name          string
		parts         []part
		guid, created string // gen: must look generated
		metadataHash  bool   // else the content hash
	}{
		{
			name:  "settings docId and core created",
			parts: []part{{settingsPart, settingsXML("{" + vectorGUID + "}")}, {corePart, coreXML(vectorCreated)}},
			guid:  vectorGUID, created: vectorCreated, metadataHash: true,
		},
		{
			name:  "lowercase GUID keeps its case",
			parts: []part{{settingsPart, settingsXML("{abcdef01-2345-6789-abcd-ef0123456789}")}, {corePart, coreXML(vectorCreated)}},
			guid:  "abcdef01-2345-6789-abcd-ef0123456789", created: vectorCreated, metadataHash: true,
		},
		{
			name:  "custom DocumentGuid and core created",
			parts: []part{{customPart, customXML("EXISTING-GUID-123")}, {corePart, coreXML(vectorCreated)}},
			guid:  "EXISTING-GUID-123", created: vectorCreated, metadataHash: true,
		},
		{
			name: "settings GUID wins over the custom property",
			parts: []part{{settingsPart, settingsXML("{" + vectorGUID + "}")}, {customPart, customXML("OTHER")},
				{corePart, coreXML(vectorCreated)}},
			guid: vectorGUID, created: vectorCreated, metadataHash: true,
		},
		{
			name:  "created is taken verbatim",
			parts: []part{{customPart, customXML("G")}, {corePart, coreXML("2015-05-17T16:02:49.00Z")}},
			guid:  "G", created: "2015-05-17T16:02:49.00Z", metadataHash: true,
		},
		{
			name: "namespaces matter, prefixes do not",
			parts: []part{
				{settingsPart, `<s xmlns:x="http://schemas.microsoft.com/office/word/2012/wordml"><x:docId x:val="{ABC}"/></s>`},
				{corePart, `<p xmlns="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"><created xmlns="http://purl.org/dc/terms/">T</created></p>`},
			},
			guid: "ABC", created: "T", metadataHash: true,
		},
		{
			name: "UTF-8 byte order mark",
			parts: []part{{settingsPart, "\ufeff" + settingsXML("{"+vectorGUID+"}")},
				{corePart, "\ufeff" + coreXML(vectorCreated)}},
			guid: vectorGUID, created: vectorCreated, metadataHash: true,
		},
		{
			name:  "no GUID anywhere",
			parts: []part{{corePart, coreXML(vectorCreated)}},
			guid:  gen, created: vectorCreated,
		},
		{
			name:  "no core properties part",
			parts: []part{{settingsPart, settingsXML("{" + vectorGUID + "}")}},
			guid:  vectorGUID, created: gen,
		},
		{
			name:  "neither value",
			parts: nil,
			guid:  gen, created: gen,
		},
		{
			name: "wrong namespace for w15 prefix",
			parts: []part{
				{settingsPart, `<w:settings xmlns:w="x" xmlns:w15="http://example.com/not-w15"><w15:docId w15:val="{ABC}"/></w:settings>`},
				{corePart, coreXML(vectorCreated)},
			},
			guid: gen, created: vectorCreated,
		},
		{
			name:  "empty docId",
			parts: []part{{settingsPart, settingsXML("{}")}, {corePart, coreXML(vectorCreated)}},
			guid:  gen, created: vectorCreated,
		},
		{
			name:  "empty created",
			parts: []part{{settingsPart, settingsXML("{" + vectorGUID + "}")}, {corePart, coreXML("")}},
			guid:  vectorGUID, created: gen,
		},
		{
			name: "malformed settings falls back to the custom property",
			parts: []part{{settingsPart, settingsXML("{" + vectorGUID + "}")[:120]}, {customPart, customXML("EXISTING-GUID-123")},
				{corePart, coreXML(vectorCreated)}},
			guid: "EXISTING-GUID-123", created: vectorCreated, metadataHash: true,
		},
		{
			name:  "malformed core",
			parts: []part{{settingsPart, settingsXML("{" + vectorGUID + "}")}, {corePart, coreXML(vectorCreated) + "<extra/>"}},
			guid:  vectorGUID, created: gen,
		},
		{
			name:  "undeclared entity",
			parts: []part{{settingsPart, settingsXML("{" + vectorGUID + "}&nbsp;")}, {corePart, coreXML(vectorCreated)}},
			guid:  gen, created: vectorCreated,
		},
		{
			name:  "created nested below the root is ignored",
			parts: []part{{customPart, customXML("G")}, {corePart, `<cp:c xmlns:cp="c" xmlns:d="http://purl.org/dc/terms/"><x><d:created>T</d:created></x></cp:c>`}},
			guid:  "G", created: gen,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docx := buildDocx(t, tt.parts...)
			id, err := Identify(docx)
			if err != nil {
				t.Fatal(err)
			}
			checkValue(t, "GUID", id.GUID, tt.guid, generatedGUID)
			checkValue(t, "Created", id.Created, tt.created, generatedCreated)
			want := FromContent(docx)
			if tt.metadataHash {
				want = FromMetadata(id.GUID, id.Created)
			}
			if id.ID != want || id.Generated == tt.metadataHash {
				t.Errorf("ID %s (generated %v), want %s (generated %v)", id.ID, id.Generated, want, !tt.metadataHash)
			}
		})
	}
}

func checkValue(t *testing.T, what, got, want string, generated *regexp.Regexp) {
	t.Helper()
	if want == "(generated)" {
		if !generated.MatchString(got) {
			t.Errorf("%s %q does not look generated", what, got)
		}
	} else if got != want {
		t.Errorf("%s %q, want %q", what, got, want)
	}
}

func TestIdentifyVectorDocument(t *testing.T) {
	t.Parallel()
	docx := buildDocx(t, part{settingsPart, settingsXML("{" + vectorGUID + "}")}, part{corePart, coreXML(vectorCreated)})
	id, err := Identify(docx)
	if err != nil {
		t.Fatal(err)
	}
	if id.ID != vectorID {
		t.Errorf("ID %s, want %s", id.ID, vectorID)
	}
}

func TestGeneratedCreatedIsNowInUTC(t *testing.T) {
	t.Parallel()
	before := time.Now().UTC().Truncate(time.Minute)
	id, err := Identify(buildDocx(t))
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UTC()
	got, err := time.Parse(time.RFC3339, id.Created)
	if err != nil {
		t.Fatal(err)
	}
	if got.Before(before) || got.After(after) {
		t.Errorf("generated Created %s not within [%s, %s]", id.Created, before, after)
	}
}
