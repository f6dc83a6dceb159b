// Package backup writes and reads quire's backup archives: a gzipped tar
// of a data directory's parts (the SQLite database copy, the server
// secret, the generated signing identity) behind a manifest.
//
// Every file in an archive and every file restored from one has mode 0600,
// every directory 0700: the archive holds the server's private keys.
package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// ManifestName is the archive's first entry.
const ManifestName = "manifest.json"

// Format is the version of the archive layout this package writes.
const Format = 1

// Manifest describes an archive.
type Manifest struct {
	Format        int       `json:"format"`
	QuireVersion  string    `json:"quireVersion"`
	SchemaVersion int       `json:"schemaVersion"`
	Database      string    `json:"database"` // "sqlite" (the copy is in the archive) or "postgres" (it is not)
	Created       time.Time `json:"created"`
	Files         []string  `json:"files"` // paths in the archive, manifest excluded
}

// File is one file to archive: its path in the archive (slash-separated,
// relative) and where it is read from.
type File struct {
	Name, Path string
}

// Limits of what Extract accepts: an archive is the operator's own, but a
// damaged or wrong file must not fill the disk.
const (
	maxEntries   = 1000
	maxFileBytes = 64 << 30
)

// Write writes the manifest, with Format and Files set, and the files to
// w as a gzipped tar.
func Write(w io.Writer, m Manifest, files []File) error {
	m.Format, m.Files = Format, nil
	for _, f := range files {
		if !validName(f.Name) {
			return fmt.Errorf("backup: unsafe name %q", f.Name)
		}
		m.Files = append(m.Files, f.Name)
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeEntry(tw, ManifestName, m.Created, int64(len(manifest)), bytes.NewReader(manifest)); err != nil {
		return err
	}
	for _, f := range files {
		if err := writeFile(tw, f); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeFile(tw *tar.Writer, file File) error {
	f, err := os.Open(file.Path)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("backup: %s is not a regular file", f.Name())
	}
	return writeEntry(tw, file.Name, fi.ModTime(), fi.Size(), f)
}

func writeEntry(tw *tar.Writer, name string, mtime time.Time, size int64, r io.Reader) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: size, ModTime: mtime, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("backup: %s: %w", name, err)
	}
	if _, err := io.CopyN(tw, r, size); err != nil {
		return fmt.Errorf("backup: %s: %w", name, err)
	}
	return nil
}

// Extract reads an archive written by Write into dir, which must exist and
// be empty, and returns its manifest. Only the manifest's files are
// accepted, each a plain relative path: nothing lands outside dir.
func Extract(r io.Reader, dir string) (Manifest, error) {
	var m Manifest
	gz, err := gzip.NewReader(r)
	if err != nil {
		return m, fmt.Errorf("backup: not a quire backup (gzip): %w", err)
	}
	tr := tar.NewReader(gz)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != ManifestName {
		return m, errors.New("backup: not a quire backup: the archive does not start with " + ManifestName)
	}
	if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&m); err != nil {
		return m, fmt.Errorf("backup: %s: %w", ManifestName, err)
	}
	if m.Format != Format {
		return m, fmt.Errorf("backup: archive format %d, this binary reads format %d", m.Format, Format)
	}
	want := map[string]bool{}
	for _, name := range m.Files {
		if !validName(name) {
			return m, fmt.Errorf("backup: %s names an unsafe path %q", ManifestName, name)
		}
		want[name] = true
	}
	if len(want) > maxEntries {
		return m, fmt.Errorf("backup: more than %d files", maxEntries)
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return m, fmt.Errorf("backup: %w", err)
		}
		if !want[hdr.Name] || hdr.Typeflag != tar.TypeReg || hdr.Size > maxFileBytes {
			return m, fmt.Errorf("backup: unexpected entry %q in the archive", hdr.Name)
		}
		delete(want, hdr.Name)
		if err := extractFile(tr, dir, hdr); err != nil {
			return m, err
		}
	}
	if len(want) > 0 {
		return m, fmt.Errorf("backup: the archive lacks %d of the files its manifest lists", len(want))
	}
	return m, nil
}

func extractFile(tr *tar.Reader, dir string, hdr *tar.Header) error {
	path := filepath.Join(dir, filepath.FromSlash(hdr.Name))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	_, err = io.CopyN(f, tr, hdr.Size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("backup: %s: %w", hdr.Name, err)
	}
	return os.Chtimes(path, hdr.ModTime, hdr.ModTime)
}

// validName accepts clean, relative, slash-separated paths.
func validName(name string) bool {
	return name != "" && name != ManifestName && fs.ValidPath(name) && path.Clean(name) == name && !strings.Contains(name, "\\")
}
