package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/docid"
)

// writeDOCX writes a DOCX with the given extra parts into dir.
func writeDOCX(t *testing.T, dir, name string, extra map[string]string) string {
	t.Helper()
	parts := map[string]string{
		"[Content_Types].xml": `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`,
		"_rels/.rels":         `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
		"word/document.xml":   `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body/></w:document>`,
	}
	for k, v := range extra {
		parts[k] = v
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, body := range parts {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(body))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func docidRun(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = runDocid(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestDocidPrintsID(t *testing.T) {
	t.Parallel()
	path := writeDOCX(t, t.TempDir(), "a.docx", map[string]string{
		"word/settings.xml": `<w:settings xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:w15="http://schemas.microsoft.com/office/word/2012/wordml"><w15:docId w15:val="{1B2C3D4E-5F60-4A7B-8C9D-0E1F2A3B4C5D}"/></w:settings>`,
		"docProps/core.xml": `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dcterms="http://purl.org/dc/terms/"><dcterms:created>2024-01-15T10:30:00Z</dcterms:created></cp:coreProperties>`,
	})
	code, out, errOut := docidRun(path)
	if code != 0 || out != "HASH-8F81172B\n" || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestDocidStamp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeDOCX(t, dir, "in.docx", nil)
	out := filepath.Join(dir, "out.docx")
	for _, args := range [][]string{{"--stamp", in, "-o", out}, {"-o", out, "-stamp", in}} {
		code, stdout, stderr := docidRun(args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		id, err := docid.Identify(data)
		if err != nil || id.Generated || stdout != id.ID+"\n" {
			t.Errorf("%v printed %q; the stamped file is %+v (%v)", args, stdout, id, err)
		}
		if code, again, _ := docidRun(out); code != 0 || again != stdout {
			t.Errorf("quire docid on the stamped file: exit %d, %q; want %q", code, again, stdout)
		}
	}
}

func TestDocidErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := writeDOCX(t, dir, "a.docx", nil)
	text := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(text, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no file", nil, 2, "usage:"},
		{"two files", []string{doc, doc}, 2, "usage:"},
		{"stamp without -o", []string{"--stamp", doc}, 2, "usage:"},
		{"-o without --stamp", []string{"-o", filepath.Join(dir, "x.docx"), doc}, 2, "usage:"},
		{"unknown flag", []string{"--bogus", doc}, 2, "flag provided but not defined"},
		{"help", []string{"-h"}, 0, "usage:"},
		{"missing file", []string{filepath.Join(dir, "none.docx")}, 1, "no such file"},
		{"not a DOCX", []string{text}, 1, "a.txt: docid: not a DOCX file"},
		{"stamp not a DOCX", []string{"--stamp", text, "-o", filepath.Join(dir, "x.docx")}, 1, "not a DOCX file"},
		{"unwritable output", []string{"--stamp", doc, "-o", filepath.Join(dir, "no", "dir", "x.docx")}, 1, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := docidRun(tt.args...)
			if code != tt.code || stdout != "" || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stderr with %q", code, stdout, stderr, tt.code, tt.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.docx")); err == nil {
		t.Error("an output file was written for a failed stamp")
	}
}
