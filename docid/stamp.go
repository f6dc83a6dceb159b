package docid

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/quire-dev/quire/internal/ooxml"
)

// Package registrations of the parts Stamp may create.
const (
	ctCustom  = "application/vnd.openxmlformats-officedocument.custom-properties+xml"
	ctCore    = "application/vnd.openxmlformats-package.core-properties+xml"
	relCustom = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/custom-properties"
	relCore   = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"

	// fmtidUserDefined is the format id of user-defined custom properties.
	fmtidUserDefined = "{D5CDD505-2E9C-101B-9397-08002B2CF9AE}"
	xmlDecl          = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n"
)

// Stamp returns the package with id.GUID and id.Created written into its
// metadata, as the editor does on export: from then on Identify reports
// FromMetadata(id.GUID, id.Created) for it, whatever later edits do to the
// content.
//
// The GUID becomes the DocumentGuid custom property in docProps/custom.xml and
// the time the dcterms:created element of docProps/core.xml; either part is
// created, with its content type and package relationship, when missing.
// Every other entry is copied byte for byte, in the original order, and new
// parts are appended. A package that already carries both values is returned
// unchanged (as a copy).
//
// Stamp fails on input Identify rejects, on a part it must edit that is not
// well-formed, and when word/settings.xml holds a GUID other than id.GUID
// (that GUID takes precedence, so stamping could not take effect).
func Stamp(docx []byte, id Identity) ([]byte, error) {
	if id.GUID == "" || id.Created == "" {
		return nil, errors.New("docid: stamp: the identity needs both GUID and Created")
	}
	if !ooxml.ValidText(id.GUID) || !ooxml.ValidText(id.Created) {
		return nil, errors.New("docid: stamp: GUID or Created holds characters XML cannot carry")
	}
	p, err := openPackage(docx)
	if err != nil {
		return nil, err
	}
	e, err := p.planStamp(id)
	if err != nil {
		return nil, err
	}
	if e.Empty() {
		return bytes.Clone(docx), nil
	}
	out, err := p.Rewrite(e, documentPart)
	if err != nil {
		return nil, fmt.Errorf("docid: stamp: %w", err)
	}
	return out, nil
}

func (p *pkg) planStamp(id Identity) (*ooxml.Edits, error) {
	meta, err := p.metadata()
	if err != nil {
		return nil, err
	}
	if meta.settingsGUID != "" && meta.settingsGUID != id.GUID {
		return nil, fmt.Errorf("docid: stamp: %s holds GUID %q, which takes precedence over %q",
			settingsPart, meta.settingsGUID, id.GUID)
	}
	e := &ooxml.Edits{}
	if meta.guid() != id.GUID {
		if err := p.stampGUID(e, id.GUID); err != nil {
			return nil, err
		}
	}
	if meta.created != id.Created {
		if err := p.stampCreated(e, id.Created); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// stampGUID sets the DocumentGuid custom property, keeping its pid when it exists.
func (p *pkg) stampGUID(e *ooxml.Edits, guid string) error {
	if !p.Has(customPart) {
		e.Set(p.Package, customPart, []byte(xmlDecl+`<Properties xmlns="`+nsCustomProps+`" xmlns:vt="`+nsVTypes+`">`+
			customProperty("", 2, guid)+`</Properties>`))
		return p.register(e, customPart, ctCustom, relCustom)
	}
	data, err := p.read(customPart)
	if err != nil {
		return err
	}
	c, err := scanCustom(data)
	if err != nil {
		return errMalformed(customPart, err)
	}
	decls := c.Xmlns("", nsCustomProps) + c.Xmlns("vt", nsVTypes)
	if c.prop < 0 {
		out, err := c.AppendChild(customProperty(decls, c.maxPID+1, guid))
		if err != nil {
			return errMalformed(customPart, err)
		}
		e.Set(p.Package, customPart, out)
		return nil
	}
	old := c.children[c.prop]
	pid := c.maxPID + 1
	if v, _ := old.elem.AttrValue("", "pid"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 2 && n <= c.maxPID {
			pid = n
		}
	}
	e.Set(p.Package, customPart, ooxml.Splice(data, ooxml.Edit{Span: old.elem.Outer, With: customProperty(decls, pid, guid)}))
	return nil
}

// customProperty is a DocumentGuid property element; decls are the
// namespace declarations it needs where it is placed.
func customProperty(decls string, pid int, guid string) string {
	return `<property` + decls + ` fmtid="` + fmtidUserDefined + `" pid="` + strconv.Itoa(pid) +
		`" name="DocumentGuid"><vt:lpwstr>` + ooxml.Escape(guid) + `</vt:lpwstr></property>`
}

// stampCreated sets dcterms:created, replacing an existing element.
func (p *pkg) stampCreated(e *ooxml.Edits, created string) error {
	if !p.Has(corePart) {
		e.Set(p.Package, corePart, []byte(xmlDecl+`<cp:coreProperties xmlns:cp="`+nsCoreProps+`" xmlns:dcterms="`+nsDCTerms+
			`" xmlns:xsi="`+nsXSI+`">`+createdElement("", created)+`</cp:coreProperties>`))
		return p.register(e, corePart, ctCore, relCore)
	}
	data, err := p.read(corePart)
	if err != nil {
		return err
	}
	c, err := scanCore(data)
	if err != nil {
		return errMalformed(corePart, err)
	}
	elem := createdElement(c.Xmlns("dcterms", nsDCTerms)+c.Xmlns("xsi", nsXSI), created)
	if c.elem >= 0 {
		e.Set(p.Package, corePart, ooxml.Splice(data, ooxml.Edit{Span: c.children[c.elem].elem.Outer, With: elem}))
		return nil
	}
	out, err := c.AppendChild(elem)
	if err != nil {
		return errMalformed(corePart, err)
	}
	e.Set(p.Package, corePart, out)
	return nil
}

// errMalformed reports a part Stamp must edit but cannot parse.
func errMalformed(part string, err error) error {
	return fmt.Errorf("docid: stamp: %s is not well-formed XML: %w", part, err)
}

func createdElement(decls, created string) string {
	return `<dcterms:created` + decls + ` xsi:type="dcterms:W3CDTF">` + ooxml.Escape(created) + `</dcterms:created>`
}

// register adds the content-type override and the package relationship of a
// new part, unless the package already has them.
func (p *pkg) register(e *ooxml.Edits, part, contentType, relType string) error {
	if err := p.addOverride(e, part, contentType); err != nil {
		return err
	}
	return p.addRelationship(e, part, relType)
}

func (p *pkg) addOverride(e *ooxml.Edits, part, contentType string) error {
	x, err := p.scanEdited(e, contentTypesPart, isName(nsContentTypes, "Override"))
	if err != nil {
		return err
	}
	for _, c := range x.children {
		if name, _ := c.elem.AttrValue("", "PartName"); strings.EqualFold(name, "/"+part) {
			return nil
		}
	}
	out, err := x.AppendChild(`<Override` + x.Xmlns("", nsContentTypes) +
		` PartName="/` + part + `" ContentType="` + contentType + `"/>`)
	if err != nil {
		return errMalformed(contentTypesPart, err)
	}
	e.Set(p.Package, contentTypesPart, out)
	return nil
}

func (p *pkg) addRelationship(e *ooxml.Edits, part, relType string) error {
	x, err := p.scanEdited(e, packageRelsPart, isName(nsRels, "Relationship"))
	if err != nil {
		return err
	}
	ids := make(map[string]bool, len(x.children))
	for _, c := range x.children {
		if t, _ := c.elem.AttrValue("", "Type"); t == relType {
			return nil
		}
		id, _ := c.elem.AttrValue("", "Id")
		ids[id] = true
	}
	n := 1
	for ids["rId"+strconv.Itoa(n)] {
		n++
	}
	out, err := x.AppendChild(`<Relationship` + x.Xmlns("", nsRels) + ` Id="rId` + strconv.Itoa(n) +
		`" Type="` + relType + `" Target="` + part + `"/>`)
	if err != nil {
		return errMalformed(packageRelsPart, err)
	}
	e.Set(p.Package, packageRelsPart, out)
	return nil
}

// scanEdited scans a part that must exist, as edited so far.
func (p *pkg) scanEdited(e *ooxml.Edits, name string, want func(xml.Name) bool) (*partXML, error) {
	data, ok := e.Get(name)
	if !ok {
		if !p.Has(name) {
			return nil, fmt.Errorf("docid: stamp: no %s in the package", name)
		}
		var err error
		if data, err = p.read(name); err != nil {
			return nil, err
		}
	}
	x, err := scanXML(data, want)
	if err != nil {
		return nil, errMalformed(name, err)
	}
	return x, nil
}
