package docid

import (
	"errors"
	"fmt"
	"strings"

	"github.com/quire-dev/quire/internal/ooxml"
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
type pkg struct{ *ooxml.Package }

// limits are the package limits of every read.
var limits = ooxml.Limits{MaxEntries: MaxEntries, MaxPartSize: MaxPartSize}

// xmlLimits bound the trees of the metadata parts, which are shallow and
// small in any real document: a hostile one fails as malformed.
var xmlLimits = ooxml.XMLLimits{MaxElements: 200_000, MaxDepth: 64}

func openPackage(b []byte) (*pkg, error) {
	p, err := ooxml.Open(b, limits)
	switch {
	case errors.Is(err, ooxml.ErrTooLarge):
		return nil, fmt.Errorf("%w: %v", ErrTooLarge, err)
	case err != nil:
		return nil, fmt.Errorf("%w: reading ZIP: %v", ErrNotDOCX, err)
	case !p.Has(documentPart):
		return nil, fmt.Errorf("%w: no %s in the ZIP", ErrNotDOCX, documentPart)
	}
	return &pkg{p}, nil
}

// read returns the decompressed part, or nil when the package has no such
// part. Errors wrap ErrTooLarge when the part exceeds MaxPartSize.
func (p *pkg) read(name string) ([]byte, error) {
	data, err := p.Read(name)
	if errors.Is(err, ooxml.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %v", ErrTooLarge, err)
	}
	if err != nil {
		return nil, fmt.Errorf("docid: %w", err)
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
	val, _ := x.children[0].elem.AttrValue(nsW15, "val")
	return strings.NewReplacer("{", "", "}", "").Replace(val)
}
