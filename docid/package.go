package docid

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Part names, as the editor library looks them up.
const (
	documentPart     = "word/document.xml"
	settingsPart     = "word/settings.xml"
	customPart       = "docProps/custom.xml"
	corePart         = "docProps/core.xml"
	contentTypesPart = "[Content_Types].xml"
	packageRelsPart  = "_rels/.rels"
)

// pkg is an opened DOCX package.
type pkg struct {
	zr    *zip.Reader
	files map[string]*zip.File // first entry of each name
}

func openPackage(b []byte) (*pkg, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	// Insecure entry names do not matter: nothing is extracted to disk.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: reading ZIP: %v", ErrNotDOCX, err)
	}
	if len(zr.File) > MaxEntries {
		return nil, fmt.Errorf("%w: %d entries, at most %d allowed", ErrTooLarge, len(zr.File), MaxEntries)
	}
	p := &pkg{zr: zr, files: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		if _, dup := p.files[f.Name]; !dup {
			p.files[f.Name] = f
		}
	}
	if p.files[documentPart] == nil {
		return nil, fmt.Errorf("%w: no %s in the ZIP", ErrNotDOCX, documentPart)
	}
	return p, nil
}

// read returns the decompressed part, or nil when the package has no such
// part. Errors wrap ErrTooLarge when the part exceeds MaxPartSize.
func (p *pkg) read(name string) ([]byte, error) {
	f := p.files[name]
	if f == nil {
		return nil, nil
	}
	if f.UncompressedSize64 > MaxPartSize {
		return nil, fmt.Errorf("%w: %s declares %d bytes, at most %d allowed", ErrTooLarge, name, f.UncompressedSize64, MaxPartSize)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("docid: opening %s: %w", name, err)
	}
	defer rc.Close()
	// The declared size may lie: cap what is actually inflated too.
	data, err := io.ReadAll(io.LimitReader(rc, MaxPartSize+1))
	if err != nil {
		return nil, fmt.Errorf("docid: reading %s: %w", name, err)
	}
	if len(data) > MaxPartSize {
		return nil, fmt.Errorf("%w: %s inflates past %d bytes", ErrTooLarge, name, MaxPartSize)
	}
	return data, nil
}

// readOptional is read for parts whose damage only means "value missing":
// it reports limit violations and turns any other failure into no data.
func (p *pkg) readOptional(name string) ([]byte, error) {
	data, err := p.read(name)
	if errors.Is(err, ErrTooLarge) {
		return nil, err
	}
	return data, nil
}

// metadata holds the identifying values found in a package; empty means missing.
type metadata struct {
	settingsGUID string // w15:docId in word/settings.xml
	customGUID   string // DocumentGuid custom property
	created      string // dcterms:created
}

// guid is the GUID the editor library uses: settings first, then custom property.
func (m metadata) guid() string {
	if m.settingsGUID != "" {
		return m.settingsGUID
	}
	return m.customGUID
}

func (p *pkg) metadata() (metadata, error) {
	var m metadata
	settings, err := p.readOptional(settingsPart)
	if err != nil {
		return m, err
	}
	custom, err := p.readOptional(customPart)
	if err != nil {
		return m, err
	}
	core, err := p.readOptional(corePart)
	if err != nil {
		return m, err
	}
	m.settingsGUID = settingsGUID(settings)
	if c, err := scanCustom(custom); err == nil {
		m.customGUID = c.guid
	}
	if c, err := scanCore(core); err == nil {
		m.created = c.created
	}
	return m, nil
}

// settingsGUID returns the w15:docId value without braces, or "".
func settingsGUID(data []byte) string {
	x, err := scanXML(data, isName(nsW15, "docId"))
	if err != nil || len(x.children) == 0 {
		return ""
	}
	val, _ := attr(x.children[0].elem, nsW15, "val")
	return strings.NewReplacer("{", "", "}", "").Replace(val)
}
