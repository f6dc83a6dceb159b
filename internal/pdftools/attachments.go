package pdftools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf"
)

// The files a PDF embeds are those of its catalog's EmbeddedFiles name
// tree: attachments lists them and detach removes one of them, as
// Gotenberg 9's /forms/pdf/attachments and detach do. File attachment
// annotations (a file pinned to a page) are not part of that tree: they
// are neither listed nor removed.

// Attachment is a file the PDF embeds, as attachments answers it (a JSON
// array of them, in the name tree's order).
type Attachment struct {
	// Name is the file's key in the EmbeddedFiles name tree: the name the
	// PDF lists it under, which detach takes.
	Name string `json:"name"`
	// FileName is its file specification's file name (/UF, else /F),
	// "" without one; writers mostly make it the Name.
	FileName string `json:"fileName,omitempty"`
	// Size is the bytes of its data, decoded: nil when quire does not
	// decode it (a filter other than FlateDecode, decode parameters, or
	// more than the reader's largest stream), rather than the size the
	// file claims (/Params /Size), which may be wrong.
	Size *int64 `json:"size,omitempty"`
	// MIMEType is the embedded file stream's /Subtype: "text/xml".
	MIMEType string `json:"mimeType,omitempty"`
	// Description is the file specification's /Desc.
	Description string `json:"description,omitempty"`
	// Relationship is its /AFRelationship (PDF/A-3, PDF 2.0): Source,
	// Data, Alternative, Supplement, EncryptedPayload, FormData, Schema
	// or Unspecified.
	Relationship string `json:"relationship,omitempty"`
}

// maxDetachName bounds detach's name, as a property's value is bounded.
const maxDetachName = maxProperty

func (r *Request) validateDetach(bad func(string, string, ...any)) {
	switch {
	case r.Name == "":
		bad("name", "is required: the name the PDF lists the file under (the attachments operation lists them)")
	case len(r.Name) > maxDetachName:
		bad("name", "at most %d bytes", maxDetachName)
	}
}

// attachments answers the files the PDF embeds as JSON.
func (s *Service) attachments(ctx context.Context, in *input) (Result, error) {
	_, cat, err := in.doc.Catalog()
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, err)
	}
	files, err := embeddedFiles(in.doc, cat)
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, err)
	}
	out := make([]Attachment, 0, len(files))
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		out = append(out, describe(in.doc, f))
	}
	b, err := json.Marshal(out)
	return Result{Data: b, ContentType: TypeJSON, Documents: 1, Pages: in.pages}, err
}

// describe reads what the file specification of f says of its file; what
// it lacks, or holds in a form the standard does not allow, is left out.
func describe(d *pdf.Document, f embedded) Attachment {
	a := Attachment{Name: f.name}
	spec, err := d.Dict(f.spec)
	if err != nil {
		return a
	}
	a.FileName = decodedText(d, spec["UF"])
	if a.FileName == "" {
		a.FileName = decodedText(d, spec["F"])
	}
	a.Description = decodedText(d, spec["Desc"])
	if rel, ok := spec["AFRelationship"].(pdf.Name); ok {
		a.Relationship = string(rel)
	}
	ef, _ := d.Dict(spec["EF"])
	st := embeddedStream(d, ef)
	if st == nil {
		return a
	}
	if mt, ok := st.Dict["Subtype"].(pdf.Name); ok {
		a.MIMEType = string(mt)
	}
	a.Size = decodedSize(st, d.Limits().MaxDecodedSize)
	return a
}

// decodedSize counts the bytes of st's data decoded, up to limit,
// without holding them, or is nil when the stream is neither plain data
// nor Flate without decode parameters (a predictor). pdf.Document.Decode
// is not used: it would hold the data, and charge it a second time to
// the document's decode budget, which CheckAll has spent once on every
// stream already, so that the files of a document near that budget
// would have no size. As the reader does, a Flate stream cut short
// counts the bytes it yields.
func decodedSize(st *pdf.Stream, limit int64) *int64 {
	var filters pdf.Array
	switch f := st.Dict["Filter"].(type) {
	case nil:
	case pdf.Array:
		filters = f
	default:
		filters = pdf.Array{f}
	}
	n := int64(len(st.Data))
	switch _, parms := st.Dict["DecodeParms"]; {
	case len(filters) == 0:
		return &n
	case len(filters) > 1 || parms || filters[0] != pdf.Name("FlateDecode") && filters[0] != pdf.Name("Fl"):
		return nil
	}
	n, err := pdf.InflatedSize(st.Data, limit)
	if err != nil {
		return nil
	}
	return &n
}

// embeddedStream is the embedded file stream of a file specification's
// /EF: its /UF, else its /F (writers put the same stream under both).
func embeddedStream(d *pdf.Document, ef pdf.Dict) *pdf.Stream {
	for _, k := range []pdf.Name{"UF", "F"} {
		if o, err := d.Resolve(ef[k]); err == nil {
			if st, ok := o.(*pdf.Stream); ok {
				return st
			}
		}
	}
	return nil
}

// decodedText is the text of a string object, "" when o is not one.
func decodedText(d *pdf.Document, o pdf.Object) string {
	o, _ = d.Resolve(o)
	return pdf.TextOf(o)
}

// detach removes the files listed under req.Name from the EmbeddedFiles
// name tree, and their file specifications from the catalog's associated
// files (/AF), where PDF/A-3 lists them. When the XMP metadata describes
// the file as the document's Factur-X invoice, it is written anew
// without that description (keeping the PDF/A claim). pdfcpu then
// rewrites the file, so that the removed file's data, no longer reached
// from the catalog, is not left in it as an earlier revision: as any
// rewriting operation, detach refuses a signed PDF unless forced. A
// file that a page or an annotation refers to also (a page's /AF, a
// file attachment annotation) stays there, with its data.
func (s *Service) detach(ctx context.Context, in *input, req Request) (Result, error) {
	catRef, cat, files, err := s.catalogFiles(in)
	if err != nil {
		return Result{}, err
	}
	kept := slices.DeleteFunc(slices.Clone(files), func(f embedded) bool { return f.name == req.Name })
	if len(kept) == len(files) {
		return Result{}, quire.Invalid("The PDF detach request is not valid.", quire.Detail{Field: "name", Issue: notEmbedded(req.Name, files)})
	}
	var removed []pdf.Ref
	for _, f := range files {
		if r, ok := f.spec.(pdf.Ref); ok && f.name == req.Name {
			removed = append(removed, r)
		}
	}
	setEmbeddedFiles(in.doc, cat, kept)
	if err := withoutRefs(in.doc, cat, "AF", removed); err != nil {
		return Result{}, s.documentError(File{Name: in.name}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
	}
	if xmpValue(xmpOf(in.doc, cat), "fx:DocumentFileName") == req.Name {
		_, info := in.doc.Info()
		if err := s.writeInfo(in.doc, catRef, cat, info.Clone(), nil); err != nil {
			return Result{}, err
		}
	} else {
		in.doc.Replace(catRef, cat)
	}
	return s.rewritten(ctx, in, req)
}

// maxNamesListed is how many of its files' names a refusal of detach
// lists.
const maxNamesListed = 10

// notEmbedded says that the PDF lists no file under name, and which it
// lists.
func notEmbedded(name string, files []embedded) string {
	if len(files) == 0 {
		return fmt.Sprintf("%q is not the name of a file the PDF embeds: it embeds none", name)
	}
	listed := make([]string, 0, maxNamesListed)
	for _, f := range files[:min(len(files), maxNamesListed)] {
		listed = append(listed, fmt.Sprintf("%q", f.name))
	}
	more := ""
	if len(files) > maxNamesListed {
		more = fmt.Sprintf(" and %d more, which the attachments operation lists", len(files)-maxNamesListed)
	}
	return fmt.Sprintf("%q is not the name of a file the PDF embeds: it embeds %s%s", name, strings.Join(listed, ", "), more)
}

// setEmbeddedFiles makes files, in the order of their names, the
// catalog's EmbeddedFiles name tree, as one node; without files the
// tree goes, and the catalog's /Names with it when it held no other.
func setEmbeddedFiles(d *pdf.Document, cat pdf.Dict, files []embedded) {
	names, err := d.Dict(cat["Names"])
	if err != nil {
		names = pdf.Dict{}
	}
	names = names.Clone()
	if len(files) == 0 {
		delete(names, "EmbeddedFiles")
	} else {
		slices.SortFunc(files, func(a, b embedded) int { return bytes.Compare(pdf.TextString(a.name), pdf.TextString(b.name)) })
		tree := pdf.Array{}
		for _, f := range files {
			tree = append(tree, pdf.TextString(f.name), f.spec)
		}
		names["EmbeddedFiles"] = d.Add(pdf.Dict{"Names": tree})
	}
	switch r, ok := cat["Names"].(pdf.Ref); {
	case len(names) == 0:
		delete(cat, "Names")
	case ok:
		d.Replace(r, names)
	default:
		cat["Names"] = names
	}
}

// withoutRefs removes the references refs from the array holder[key],
// and the key when the array is left empty.
func withoutRefs(d *pdf.Document, holder pdf.Dict, key pdf.Name, refs []pdf.Ref) error {
	if _, ok := holder[key]; !ok || len(refs) == 0 {
		return nil
	}
	arr, err := d.Array(holder[key])
	if err != nil {
		return fmt.Errorf("/%s: %w", key, err)
	}
	arr = slices.DeleteFunc(slices.Clone(arr), func(o pdf.Object) bool {
		r, ok := o.(pdf.Ref)
		return ok && slices.Contains(refs, r)
	})
	if len(arr) == 0 {
		delete(holder, key)
	} else {
		holder[key] = arr
	}
	return nil
}
