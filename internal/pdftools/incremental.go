package pdftools

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"mime"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/xmp"
)

// The operations written by quire's PDF model as one incremental update
// after the file's bytes: a signed PDF keeps every signature valid.

// infoKeys are the information dictionary's keys of MetadataKeys.
var infoKeys = map[string]pdf.Name{"title": "Title", "author": "Author", "subject": "Subject",
	"keywords": "Keywords", "creator": "Creator", "producer": "Producer"}

// Metadata is the JSON answer of metadata without set.*.
type Metadata struct {
	Pages        int               `json:"pages"`
	Signed       bool              `json:"signed"`
	Properties   map[string]string `json:"properties"` // MetadataKeys present
	CreationDate string            `json:"creationDate,omitempty"`
	ModDate      string            `json:"modDate,omitempty"`
	PDFA         string            `json:"pdfa,omitempty"` // the XMP's claim: "3B"
	Attachments  []string          `json:"attachments"`
	Version      string            `json:"version"`    // "1.7": the header's, or the catalog's when later
	Tagged       bool              `json:"tagged"`     // marked content for assistive technology (MarkInfo)
	FormFields   bool              `json:"formFields"` // an interactive form with fields
	Linearized   bool              `json:"linearized"` // built for fast web view
}

func (s *Service) metadata(in *input, req Request) (Result, error) {
	_, info := in.doc.Info()
	catRef, cat, err := in.doc.Catalog()
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, err)
	}
	if len(req.Set) == 0 {
		return s.metadataJSON(in, info, cat)
	}
	info = info.Clone()
	for k, v := range req.Set {
		if v == "" {
			delete(info, infoKeys[k])
		} else {
			info[infoKeys[k]] = pdf.TextString(v)
		}
	}
	if err := s.writeInfo(in.doc, catRef, cat.Clone(), info, nil); err != nil {
		return Result{}, err
	}
	return s.saved(in)
}

func (s *Service) metadataJSON(in *input, info, cat pdf.Dict) (Result, error) {
	m := Metadata{Pages: in.pages, Signed: in.signed, Properties: map[string]string{}, Attachments: []string{}}
	str := func(k pdf.Name) string { return decodedText(in.doc, info[k]) }
	for _, k := range MetadataKeys {
		if v := str(infoKeys[k]); v != "" {
			m.Properties[k] = v
		}
	}
	m.CreationDate, m.ModDate = xmp.Date(str("CreationDate")), xmp.Date(str("ModDate"))
	if id := pdfaOf(xmpOf(in.doc, cat)); id.part != "" {
		m.PDFA = id.part + id.conformance
	}
	files, err := embeddedFiles(in.doc, cat)
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, err)
	}
	for _, f := range files {
		m.Attachments = append(m.Attachments, f.name)
	}
	m.Version, m.Linearized = versionOf(in.doc.Bytes(), cat), linearized(in.doc.Bytes())
	markInfo, _ := in.doc.Dict(cat["MarkInfo"])
	marked, _ := in.doc.Resolve(markInfo["Marked"])
	m.Tagged = marked == pdf.Bool(true)
	form, _ := in.doc.Dict(cat["AcroForm"])
	fields, _ := in.doc.Array(form["Fields"])
	m.FormFields = len(fields) > 0
	b, _ := json.Marshal(m)
	return Result{Data: b, ContentType: TypeJSON, Documents: 1}, nil
}

// headerVersion is the version of a PDF's header line ("%PDF-1.7").
var headerVersion = regexp.MustCompile(`^%PDF-(\d\.\d)`)

// versionOf is the PDF version of data: its header's, or its catalog's
// (/Version, which an incremental update may raise) when later.
func versionOf(data []byte, cat pdf.Dict) string {
	v := "1.7" // quire's reader repairs a file without a valid header as 1.7
	if m := headerVersion.FindSubmatch(data); m != nil {
		v = string(m[1])
	}
	if name, ok := cat["Version"].(pdf.Name); ok && len(name) == 3 && string(name) > v {
		v = string(name)
	}
	return v
}

// linearized tells whether data is a linearized PDF, whose first object,
// within its first 1024 bytes, holds the linearization parameters.
func linearized(data []byte) bool {
	return bytes.Contains(data[:min(len(data), 1024)], []byte("/Linearized"))
}

// writeInfo sets info (with ModDate now) as the document information and
// writes the XMP metadata that agrees with it into cat, which is then
// replaced; fx adds the Factur-X properties and makes the claim PDF/A-3B.
func (s *Service) writeInfo(d *pdf.Document, catRef pdf.Ref, cat, info pdf.Dict, fx *facturX) error {
	info["ModDate"] = pdf.String(pdfDate(time.Now()))
	if r, _ := d.Info(); r != (pdf.Ref{}) {
		d.Replace(r, info)
	} else {
		d.SetInfo(d.Add(info))
	}
	id := pdfaOf(xmpOf(d, cat))
	if fx != nil {
		id = pdfaID{"3", "B"}
	}
	cat["Metadata"] = &pdf.Stream{Dict: pdf.Dict{"Type": pdf.Name("Metadata"), "Subtype": pdf.Name("XML")}, Data: xmpPacket(info, id, fx)}
	d.Replace(catRef, cat)
	return nil
}

// saved writes the update and answers the PDF.
func (s *Service) saved(in *input) (Result, error) {
	out, err := in.doc.Save()
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
	}
	return pdfResult(out, 1, in.pages), nil
}

// embedded is one entry of the document's EmbeddedFiles name tree.
type embedded struct {
	name string
	spec pdf.Object
}

// catalogFiles returns a copy of in's catalog to change, with the
// entries of its EmbeddedFiles name tree.
func (s *Service) catalogFiles(in *input) (pdf.Ref, pdf.Dict, []embedded, error) {
	catRef, cat, err := in.doc.Catalog()
	if err != nil {
		return pdf.Ref{}, nil, nil, s.documentError(File{Name: in.name}, err)
	}
	cat = cat.Clone()
	files, err := embeddedFiles(in.doc, cat)
	if err != nil {
		return pdf.Ref{}, nil, nil, s.documentError(File{Name: in.name}, err)
	}
	return catRef, cat, files, nil
}

// embeddedFiles returns the entries of the EmbeddedFiles name tree,
// walked within the document's limits.
func embeddedFiles(d *pdf.Document, cat pdf.Dict) ([]embedded, error) {
	names, err := d.Dict(cat["Names"])
	if err != nil {
		return nil, nil
	}
	root, err := d.Dict(names["EmbeddedFiles"])
	if err != nil {
		return nil, nil
	}
	var out []embedded
	seen := 0
	var walk func(node pdf.Dict, depth int) error
	walk = func(node pdf.Dict, depth int) error {
		if seen++; depth > d.Limits().MaxNesting || seen > d.Limits().MaxObjects {
			return fmt.Errorf("%w: the EmbeddedFiles name tree is too deep or too large", pdf.ErrUnreadable)
		}
		if arr, err := d.Array(node["Names"]); err == nil {
			for i := 0; i+1 < len(arr); i += 2 {
				out = append(out, embedded{name: decodedText(d, arr[i]), spec: arr[i+1]})
			}
		}
		kids, _ := d.Array(node["Kids"])
		for _, k := range kids {
			kid, err := d.Dict(k)
			if err != nil {
				continue
			}
			if err := walk(kid, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(root, 0)
}

func (s *Service) attach(in *input, req Request) (Result, error) {
	catRef, cat, files, err := s.catalogFiles(in)
	if err != nil {
		return Result{}, err
	}
	var fx *facturX
	if req.FacturX {
		if fx, err = s.facturXOf(in, cat, req.Files[1:]); err != nil {
			return Result{}, err
		}
	}
	taken := map[string]bool{}
	for _, f := range files {
		taken[f.name] = true
	}
	for _, f := range req.Files[1:] {
		name := uniqueName(attachmentName(f), taken)
		spec := fileSpec(name, f.Data)
		if fx != nil && name == FacturXName {
			spec["AFRelationship"] = pdf.Name(fx.relationship())
			ref := in.doc.Add(spec)
			if err := in.doc.AppendRef(cat, "AF", ref); err != nil {
				return Result{}, s.documentError(File{Name: in.name}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
			}
			files = append(files, embedded{name: name, spec: ref})
			continue
		}
		files = append(files, embedded{name: name, spec: in.doc.Add(spec)})
	}
	setEmbeddedFiles(in.doc, cat, files)
	if fx != nil {
		cat["Version"] = pdf.Name("1.7") // PDF/A-3 is based on PDF 1.7
		_, info := in.doc.Info()
		return s.savedAfter(in, s.writeInfo(in.doc, catRef, cat, info.Clone(), fx))
	}
	in.doc.Replace(catRef, cat)
	return s.saved(in)
}

func (s *Service) savedAfter(in *input, err error) (Result, error) {
	if err != nil {
		return Result{}, err
	}
	return s.saved(in)
}

// fileSpec is the file specification of an embedded file, its data
// compressed, with the MIME type its name tells (PDF/A-3 asks for one).
func fileSpec(name string, data []byte) pdf.Dict {
	mt, _, _ := strings.Cut(mime.TypeByExtension(path.Ext(name)), ";")
	if mt == "" {
		mt = "application/octet-stream"
	}
	if strings.EqualFold(path.Ext(name), ".xml") {
		mt = "text/xml"
	}
	now := pdf.String(pdfDate(time.Now()))
	ef := &pdf.Stream{Dict: pdf.Dict{"Type": pdf.Name("EmbeddedFile"), "Subtype": pdf.Name(mt), "Filter": pdf.Name("FlateDecode"),
		"Params": pdf.Dict{"Size": pdf.Int(len(data)), "ModDate": now}}, Data: pdf.Deflate(data)}
	return pdf.Dict{"Type": pdf.Name("Filespec"), "F": pdf.TextString(name), "UF": pdf.TextString(name),
		"EF": pdf.Dict{"F": ef, "UF": ef}, "AFRelationship": pdf.Name("Unspecified")}
}

// attachmentName is the name a part is embedded under: its base name.
func attachmentName(f File) string {
	if n := strings.TrimSpace(baseName(f.Name)); n != "" {
		if strings.EqualFold(n, FacturXName) {
			return FacturXName
		}
		return n
	}
	return "attachment"
}

// uniqueName is name, or name with " (2)", " (3)" ... before its
// extension when the document already holds a file of that name.
func uniqueName(name string, taken map[string]bool) string {
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	out := name
	for n := 2; taken[out]; n++ {
		out = fmt.Sprintf("%s (%d)%s", base, n, ext)
	}
	taken[out] = true
	return out
}

// facturXOf checks that the input can become a Factur-X invoice: a
// PDF/A (any part, level B or A: the update then claims PDF/A-3B, which
// the file meets when it met its former claim, PDF/A-3 being PDF/A-2 with
// embedded files of any kind), with a factur-x.xml that is XML of a
// Factur-X profile.
func (s *Service) facturXOf(in *input, cat pdf.Dict, parts []File) (*facturX, error) {
	id := pdfaOf(xmpOf(in.doc, cat))
	if id.part == "" {
		return nil, quire.Errorf(quire.CodeUnprocessable,
			"%s is not PDF/A: a Factur-X invoice must be PDF/A-3. Convert the document with pdfa=PDF/A-3b (POST /v1/convert) and attach the invoice to that PDF.", display(File{Name: in.name}))
	}
	for _, f := range parts {
		if attachmentName(f) != FacturXName {
			continue
		}
		level, err := FacturXLevel(f.Data)
		if err != nil {
			return nil, quire.Invalid("The Factur-X invoice is not valid.", quire.Detail{Field: "file", Issue: FacturXName + ": " + err.Error()})
		}
		return &facturX{level: level}, nil
	}
	return nil, quire.Invalid("The Factur-X invoice is missing.", quire.Detail{Field: "file", Issue: "facturx=true needs a part named " + FacturXName})
}

// facturXLevels maps the guideline identifiers of the Factur-X profiles
// (GuidelineSpecifiedDocumentContextParameter/ID) to the conformance
// levels of the XMP, most specific first.
var facturXLevels = []struct{ id, level string }{
	{"urn:factur-x.eu:1p0:minimum", "MINIMUM"},
	{"urn:factur-x.eu:1p0:basicwl", "BASIC WL"},
	{"urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic", "BASIC"},
	{"urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended", "EXTENDED"},
	{"urn:cen.eu:en16931:2017", "EN 16931"},
}

// FacturXLevel reads the conformance level of a Factur-X (CII) invoice
// from its guideline: MINIMUM, BASIC WL, BASIC, EN 16931 or EXTENDED.
func FacturXLevel(b []byte) (string, error) {
	if bytes.Contains(b, []byte("<!DOCTYPE")) {
		return "", fmt.Errorf("a DTD is not allowed")
	}
	var doc struct {
		XMLName xml.Name
		Context struct {
			Guideline struct {
				ID string `xml:"ID"`
			} `xml:"GuidelineSpecifiedDocumentContextParameter"`
		} `xml:"ExchangedDocumentContext"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return "", fmt.Errorf("not XML: %v", err)
	}
	if doc.XMLName.Local != "CrossIndustryInvoice" {
		return "", fmt.Errorf("the root element is %q, not CrossIndustryInvoice", doc.XMLName.Local)
	}
	id := strings.TrimSpace(doc.Context.Guideline.ID)
	for _, l := range facturXLevels {
		if strings.HasPrefix(id, l.id) {
			return l.level, nil
		}
	}
	return "", fmt.Errorf("the guideline %q is not a Factur-X profile", id)
}

// relationship is the AFRelationship of the invoice: Data for the
// profiles that are not a full invoice (MINIMUM, BASIC WL), Alternative
// for the others, as the Factur-X specification says.
func (fx *facturX) relationship() string {
	if fx.level == "MINIMUM" || fx.level == "BASIC WL" {
		return "Data"
	}
	return "Alternative"
}
