package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteThenExtract(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "secret"), []byte("s3cret\n"), 0o644)
	var buf bytes.Buffer
	m := Manifest{QuireVersion: "v1", SchemaVersion: 5, Database: "sqlite", Created: time.Now().UTC()}
	if err := Write(&buf, m, []File{{Name: "signing/key.pem", Path: filepath.Join(src, "secret")}}); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	got, err := Extract(&buf, dst)
	if err != nil || got.SchemaVersion != 5 || got.Format != Format || len(got.Files) != 1 {
		t.Fatalf("Extract = %+v, %v", got, err)
	}
	fi, err := os.Stat(filepath.Join(dst, "signing", "key.pem"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("extracted file: %v %v", fi, err)
	}
	if di, _ := os.Stat(filepath.Join(dst, "signing")); di.Mode().Perm() != 0o700 {
		t.Errorf("extracted directory mode %v", di.Mode().Perm())
	}
}

// TestExtractRefusesWhatWriteNeverWrites: paths out of the directory,
// entries the manifest does not list, links, archives without a manifest.
func TestExtractRefusesWhatWriteNeverWrites(t *testing.T) {
	manifest := func(files string) tarEntry {
		return tarEntry{name: ManifestName, body: `{"format":1,"database":"sqlite","files":[` + files + `]}`}
	}
	for name, entries := range map[string][]tarEntry{
		"traversal":     {manifest(`"../evil"`), {name: "../evil", body: "x"}},
		"absolute":      {manifest(`"/etc/evil"`), {name: "/etc/evil", body: "x"}},
		"unlisted":      {manifest(`"secret"`), {name: "secret", body: "x"}, {name: "extra", body: "x"}},
		"symlink":       {manifest(`"secret"`), {name: "secret", link: "/etc/passwd"}},
		"no manifest":   {{name: "secret", body: "x"}},
		"missing files": {manifest(`"secret","quire.db"`), {name: "secret", body: "x"}},
	} {
		dst := t.TempDir()
		if _, err := Extract(archive(t, entries), dst); err == nil {
			t.Errorf("%s: extracted", name)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "evil")); err == nil {
			t.Errorf("%s: a file landed outside the directory", name)
		}
	}
}

type tarEntry struct{ name, body, link string }

func archive(t *testing.T, entries []tarEntry) *bytes.Buffer {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o600, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		if e.link != "" {
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e.body))
	}
	tw.Close()
	gz.Close()
	return &buf
}
