package annotate

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/ooxml"
)

// Namespaces of the elements read and written.
const (
	nsW   = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsW14 = "http://schemas.microsoft.com/office/word/2010/wordml"
	nsWP  = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
	nsA   = "http://schemas.openxmlformats.org/drawingml/2006/main"
	nsPic = "http://schemas.openxmlformats.org/drawingml/2006/picture"
	nsR   = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

	nsRels         = "http://schemas.openxmlformats.org/package/2006/relationships"
	nsContentTypes = "http://schemas.openxmlformats.org/package/2006/content-types"
	relImage       = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image"
	relHeader      = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/header"
	relFooter      = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer"

	documentPart     = "word/document.xml"
	contentTypesPart = "[Content_Types].xml"
	xmlDecl          = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n"
)

// Report tells what a fill did not do.
type Report struct {
	// Unmatched are the fields no content control took: ids as given,
	// groups as "group:" and the group name.
	Unmatched []string
}

// Fill returns docx with fields filled. Its errors are *quire.Error:
// unprocessable for a package that is not a usable DOCX, payload too large
// for one beyond the limits, validation for a bad image.
func (e *Engine) Fill(ctx context.Context, docx []byte, fields []Field) ([]byte, Report, error) {
	p, edits, rep, err := e.fill(ctx, docx, fields, false)
	if err != nil {
		return nil, Report{}, err
	}
	if edits.Empty() {
		return docx, rep, nil
	}
	out, err := p.RewriteContext(ctx, edits, documentPart)
	if err := ctx.Err(); err != nil { // the client left while the package was written
		return nil, Report{}, err
	}
	if err != nil {
		return nil, Report{}, fmt.Errorf("annotate: %w", err)
	}
	return out, rep, nil
}

// FillForConversion is Fill for a document that goes straight to a
// converter: it returns the opened template and the filling's edits,
// which the converter writes out once with its own (Converter), and what
// it writes is not compressed (a third less time for the demo's request).
func (e *Engine) FillForConversion(ctx context.Context, docx []byte, fields []Field) (*ooxml.Package, *ooxml.Edits, Report, error) {
	return e.fill(ctx, docx, fields, true)
}

// open reads template docx within the limits: its package, and the parts
// a filling reads.
func (e *Engine) open(ctx context.Context, docx []byte, uncompressed bool) (*filling, error) {
	p, err := ooxml.Open(docx, e.limits.Package)
	if err != nil {
		return nil, packageError(err)
	}
	if !p.Has(documentPart) {
		return nil, quire.Errorf(quire.CodeUnprocessable, "The document is not a DOCX file: its ZIP package has no %s.", documentPart)
	}
	f := &filling{engine: e, ctx: ctx, pkg: p, edits: &ooxml.Edits{Uncompressed: uncompressed}}
	return f, f.load()
}

func (e *Engine) fill(ctx context.Context, docx []byte, fields []Field, uncompressed bool) (*ooxml.Package, *ooxml.Edits, Report, error) {
	f, err := e.open(ctx, docx, uncompressed)
	if err != nil {
		return nil, nil, Report{}, err
	}
	p := f.pkg
	var rep Report
	for i := range fields {
		if err := ctx.Err(); err != nil { // the client left
			return nil, nil, Report{}, err
		}
		n, err := f.fill(&fields[i], fmt.Sprintf("fields[%d]", i))
		if err != nil {
			return nil, nil, Report{}, err
		}
		if n == 0 {
			rep.Unmatched = append(rep.Unmatched, fields[i].key())
		}
	}
	if err := f.apply(); err != nil {
		return nil, nil, Report{}, err
	}
	return p, f.edits, rep, nil
}

// packageError turns an ooxml error into the answer the client gets.
func packageError(err error) error {
	if errors.Is(err, ooxml.ErrTooLarge) {
		return quire.Errorf(quire.CodePayloadTooLarge, "The document is too large to fill: %s.", strings.TrimPrefix(err.Error(), "ooxml: package exceeds limits: "))
	}
	return quire.Errorf(quire.CodeUnprocessable, "The document is not a usable DOCX file: %s.", strings.TrimPrefix(err.Error(), "ooxml: "))
}

// story is a part with text that may hold content controls: the main
// document, a header or a footer.
type story struct {
	name  string
	doc   *ooxml.Doc
	sdts  []*sdt
	edits map[*sdt]ooxml.Edit // new sdtContent of filled controls
	rels  []string            // relationships to add
	ids   map[string]bool     // relationship ids in use
	paras map[string]bool     // w14:paraId values in the part as read
	para  uint32              // the last w14:paraId given out (paraID)
}

// sdt is a content control that is a field.
type sdt struct {
	story   *story
	el      *ooxml.Element
	content *ooxml.Element // w:sdtContent
	id      string
	group   string // "" when the tag is not JSON with a group
}

// filling is the state of one Fill.
type filling struct {
	engine  *Engine
	ctx     context.Context
	pkg     *ooxml.Package
	edits   *ooxml.Edits
	stories []*story
	docPrID int      // highest wp:docPr id in use
	types   []string // image extensions needing a content-type default
	media   int      // media parts added
}

// load parses the main document and its headers and footers, in that order.
func (f *filling) load() error {
	names := []string{documentPart}
	rels, err := f.read(relsName(documentPart))
	if err != nil {
		return err
	}
	if rels != nil {
		for _, r := range rels.Root.Children {
			typ, _ := r.AttrValue("", "Type")
			target, _ := r.AttrValue("", "Target")
			mode, _ := r.AttrValue("", "TargetMode")
			if (typ == relHeader || typ == relFooter) && mode != "External" {
				names = append(names, resolve(documentPart, target))
			}
		}
	}
	for _, name := range names {
		if !f.pkg.Has(name) {
			continue
		}
		doc, err := f.read(name)
		if err != nil {
			return err
		}
		f.stories = append(f.stories, f.scan(name, doc))
	}
	return nil
}

// read parses a part, nil when the package has none.
func (f *filling) read(name string) (*ooxml.Doc, error) {
	data, err := f.pkg.Read(name)
	if err != nil {
		return nil, packageError(err)
	}
	if data == nil {
		return nil, nil
	}
	doc, err := ooxml.Parse(data, f.engine.limits.XML)
	if errors.Is(err, ooxml.ErrTooLarge) {
		return nil, packageError(fmt.Errorf("%s: %w", name, err))
	}
	if err != nil {
		return nil, quire.Errorf(quire.CodeUnprocessable, "The document is not a usable DOCX file: %s is not well-formed XML (%v).", name, err)
	}
	return doc, nil
}

// relsName is the relationships part of part.
func relsName(part string) string {
	dir, file := path.Split(part)
	return dir + "_rels/" + file + ".rels"
}

// resolve returns the part a relationship target of part names.
func resolve(part, target string) string {
	if strings.HasPrefix(target, "/") {
		return strings.TrimPrefix(path.Clean(target), "/")
	}
	return strings.TrimPrefix(path.Clean(path.Join(path.Dir(part), target)), "/")
}

// scan collects the fields of a story and what new content must avoid.
func (f *filling) scan(name string, doc *ooxml.Doc) *story {
	var start [4]byte
	rand.Read(start[:])
	s := &story{name: name, doc: doc, edits: map[*sdt]ooxml.Edit{}, paras: map[string]bool{}, para: binary.BigEndian.Uint32(start[:])}
	doc.Root.Walk(func(e *ooxml.Element) bool {
		if id, ok := e.AttrValue(nsW14, "paraId"); ok {
			s.paras[strings.ToUpper(id)] = true
		}
		if e.Is(nsWP, "docPr") {
			v, _ := e.AttrValue("", "id")
			if n, err := strconv.Atoi(v); err == nil && n > f.docPrID && n < math.MaxInt32 {
				f.docPrID = n
			}
		}
		if e.Is(nsW, "sdt") {
			if c := fieldOf(s, e); c != nil {
				s.sdts = append(s.sdts, c)
			}
		}
		return true
	})
	return s
}

// fieldOf returns the content control e as a field, or nil when it is not
// one: no content, a document part gallery (a table of contents, say), or
// a section of the editor library.
func fieldOf(s *story, e *ooxml.Element) *sdt {
	pr, content := e.Child(nsW, "sdtPr"), e.Child(nsW, "sdtContent")
	if pr == nil || content == nil || pr.Child(nsW, "docPartObj") != nil {
		return nil
	}
	c := &sdt{story: s, el: e, content: content}
	if id := pr.Child(nsW, "id"); id != nil {
		c.id, _ = id.AttrValue(nsW, "val")
	}
	if tag := pr.Child(nsW, "tag"); tag != nil {
		v, _ := tag.AttrValue(nsW, "val")
		var j struct {
			Group any    `json:"group"`
			Type  string `json:"type"`
		}
		if json.Unmarshal([]byte(v), &j) == nil {
			if j.Type == "documentSection" {
				return nil
			}
			c.group, _ = j.Group.(string)
		}
	}
	return c
}

// fill fills the controls field names and returns how many it filled.
func (f *filling) fill(field *Field, at string) (int, error) {
	var n int
	for _, s := range f.stories {
		for _, c := range s.sdts {
			if field.ID != "" && c.id != field.ID || field.Group != "" && c.group != field.Group {
				continue
			}
			ok, err := f.fillOne(c, field, at)
			if err != nil {
				return n, err
			}
			if ok {
				n++
				if field.ID != "" {
					return n, nil
				}
			}
		}
	}
	return n, nil
}

// fillOne fills one control; false when the field does not fit it (a
// table field on a control without a table).
func (f *filling) fillOne(c *sdt, field *Field, at string) (bool, error) {
	var content string
	switch {
	case field.Type == TypeTable:
		tbl := c.content.Find(nsW, "tbl")
		if tbl == nil {
			return false, nil
		}
		return true, f.fillTable(c, tbl, field)
	case field.Type == TypeText || field.Type == TypeSignature && !isImageRef(field.Value):
		if field.Value == "" {
			return true, nil
		}
		content = c.text(field.Value, field.Options.KeepTextNodeStyles)
	default:
		run, err := f.imageRun(c, field, at)
		if err != nil {
			return false, err
		}
		content = c.block(run)
	}
	c.story.edits[c] = ooxml.Edit{Span: c.content.Inner, With: content}
	return true, nil
}

// w names an element of the main namespace with the prefix the control uses.
func (c *sdt) w(local string) string {
	if p := c.story.doc.Prefix(c.content); p != "" {
		return p + ":" + local
	}
	return local
}

// isBlock reports whether the control holds paragraphs or tables rather than runs.
func (c *sdt) isBlock() bool {
	return c.content.Child(nsW, "p") != nil || c.content.Child(nsW, "tbl") != nil
}

// block wraps a run in a paragraph, with the first paragraph's properties,
// when the control is a block one.
func (c *sdt) block(run string) string {
	if !c.isBlock() {
		return run
	}
	var pPr []byte
	if p := c.content.Child(nsW, "p"); p != nil {
		pPr = c.raw(p.Child(nsW, "pPr"))
	}
	return "<" + c.w("p") + ">" + string(pPr) + run + "</" + c.w("p") + ">"
}

// raw returns the bytes of e, nil for nil.
func (c *sdt) raw(e *ooxml.Element) []byte {
	if e == nil {
		return nil
	}
	return c.story.doc.Bytes(e.Outer)
}

// text is the content of a control filled with value.
func (c *sdt) text(value string, keepStyle bool) string {
	var rPr []byte
	if keepStyle {
		rPr = c.raw(firstTextRunProps(c.content))
	}
	return c.block(c.run(rPr, value))
}

// firstTextRunProps returns the run properties of the first run with text under e.
func firstTextRunProps(e *ooxml.Element) *ooxml.Element {
	var rPr *ooxml.Element
	found := false
	e.Walk(func(x *ooxml.Element) bool {
		if found {
			return false
		}
		if x.Is(nsW, "r") && x.Child(nsW, "t") != nil {
			rPr, found = x.Child(nsW, "rPr"), true
		}
		return !found
	})
	return rPr
}

// run is a run of text; line breaks in value become w:br.
func (c *sdt) run(rPr []byte, value string) string {
	var b strings.Builder
	b.WriteString("<" + c.w("r") + ">")
	b.Write(rPr)
	c.textTags().write(&b, value)
	b.WriteString("</" + c.w("r") + ">")
	return b.String()
}

// textTags are the tags of a run's text in the control's part, named
// with the part's prefix.
type textTags struct{ t, tEnd, br string }

func (c *sdt) textTags() textTags {
	return textTags{t: "<" + c.w("t") + ` xml:space="preserve">`, tEnd: "</" + c.w("t") + ">", br: "<" + c.w("br") + "/>"}
}

// write writes value as a run's text: its lines in w:t, w:br between
// them. It allocates nothing for values that need no escaping, since a
// table writes it for each of millions of cells.
func (tags textTags) write(b *strings.Builder, value string) {
	for i := 0; ; i++ {
		line, rest, more := strings.Cut(value, "\n")
		if more { // "\r\n" breaks a line as "\n" does
			line = strings.TrimSuffix(line, "\r")
		}
		if i > 0 {
			b.WriteString(tags.br)
		}
		b.WriteString(tags.t)
		ooxml.EscapeTo(b, line)
		b.WriteString(tags.tEnd)
		if !more {
			return
		}
		value = rest
	}
}

// apply turns the fills into part edits: each story's controls get their
// new content, filled controls stop showing their placeholder, and new
// relationships, media and content types are written.
func (f *filling) apply() error {
	for _, s := range f.stories {
		var edits []ooxml.Edit
		for c, e := range s.edits {
			if s.insideFilled(c) {
				continue // an enclosing control's new content replaces it
			}
			edits = append(edits, e)
			if ph := c.el.Child(nsW, "sdtPr").Child(nsW, "showingPlcHdr"); ph != nil {
				edits = append(edits, ooxml.Edit{Span: ph.Outer})
			}
		}
		if len(edits) == 0 {
			continue
		}
		sort.Slice(edits, func(i, j int) bool { return edits[i].Span.Start < edits[j].Span.Start })
		f.edits.SetSpliced(f.pkg, s.name, s.doc.Data, edits...)
		if err := f.addRelationships(s); err != nil {
			return err
		}
	}
	return f.addContentTypes()
}

// insideFilled reports whether c lies in the content of another filled control.
func (s *story) insideFilled(c *sdt) bool {
	for o := range s.edits {
		if o != c && o.content.Inner.Start <= c.el.Outer.Start && c.el.Outer.End <= o.content.Inner.End {
			return true
		}
	}
	return false
}

// addRelationships writes the story's new relationships into its
// relationships part, creating it when missing.
func (f *filling) addRelationships(s *story) error {
	if len(s.rels) == 0 {
		return nil
	}
	name := relsName(s.name)
	frags := strings.Join(s.rels, "")
	doc, err := f.read(name)
	if err != nil {
		return err
	}
	if doc == nil {
		f.edits.Set(f.pkg, name, []byte(xmlDecl+`<Relationships xmlns="`+nsRels+`">`+frags+`</Relationships>`))
		return nil
	}
	out, err := doc.AppendChild(frags)
	if err != nil {
		return quire.Errorf(quire.CodeUnprocessable, "The document is not a usable DOCX file: %s: %v.", name, err)
	}
	f.edits.Set(f.pkg, name, out)
	return nil
}

// relID returns a relationship id unused in the story's relationships part.
func (f *filling) relID(s *story) (string, error) {
	if s.ids == nil {
		s.ids = map[string]bool{}
		doc, err := f.read(relsName(s.name))
		if err != nil {
			return "", err
		}
		if doc != nil {
			for _, r := range doc.Root.Children {
				id, _ := r.AttrValue("", "Id")
				s.ids[id] = true
			}
		}
	}
	for n := len(s.ids) + 1; ; n++ {
		if id := fmt.Sprintf("rId%d", n); !s.ids[id] {
			s.ids[id] = true
			return id, nil
		}
	}
}

// addContentTypes declares the extensions of the media added.
func (f *filling) addContentTypes() error {
	if len(f.types) == 0 {
		return nil
	}
	doc, err := f.read(contentTypesPart)
	if err != nil {
		return err
	}
	if doc == nil {
		return quire.Errorf(quire.CodeUnprocessable, "The document is not a usable DOCX file: it has no %s.", contentTypesPart)
	}
	var frags string
	for _, ext := range f.types {
		if !hasDefault(doc, ext) {
			frags += `<Default` + doc.Xmlns("", nsContentTypes) + ` Extension="` + ext + `" ContentType="image/` + ext + `"/>`
		}
	}
	if frags == "" {
		return nil
	}
	// Defaults go first, where Word and LibreOffice write them.
	var out []byte
	if len(doc.Root.Children) > 0 {
		at := doc.Root.Children[0].Outer.Start
		out = ooxml.Splice(doc.Data, ooxml.Edit{Span: ooxml.Span{Start: at, End: at}, With: frags})
	} else if out, err = doc.AppendChild(frags); err != nil {
		return quire.Errorf(quire.CodeUnprocessable, "The document is not a usable DOCX file: %s: %v.", contentTypesPart, err)
	}
	f.edits.Set(f.pkg, contentTypesPart, out)
	return nil
}

func hasDefault(doc *ooxml.Doc, ext string) bool {
	for _, d := range doc.Root.Children {
		if v, _ := d.AttrValue("", "Extension"); d.Is(nsContentTypes, "Default") && strings.EqualFold(v, ext) {
			return true
		}
	}
	return false
}
