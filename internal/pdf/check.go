package pdf

import (
	"context"
	"fmt"
)

// CheckAll loads every object of the document and undoes the Flate
// filters of every stream, within the document's limits (nesting, object
// count, decode budget), so that a library that reads the whole file
// afterwards (pdfcpu, in internal/pdftools) is handed only a file whose
// every part has been read within the same bounds as signing. Streams
// whose filters are not all Flate are decoded up to their first other
// filter, which quire does not undo and the bound does not cover: image
// codecs (DCT, JPX, CCITT, JBIG2), whose output is bounded by the image's
// declared size, not by a ratio.
func (d *Document) CheckAll(ctx context.Context) (err error) {
	defer Recover(&err)
	for num, n := 1, d.size(); num < n; num++ { // size walks the cross-reference: once
		if num%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		o, err := d.Object(num)
		if err != nil {
			return inputError(err)
		}
		st, ok := o.(*Stream)
		if !ok {
			continue
		}
		if err := d.checkStream(st); err != nil {
			return inputError(fmt.Errorf("pdf: object %d: %w", num, err))
		}
	}
	return nil
}

// checkStream decodes the leading Flate filters of st within the budget.
func (d *Document) checkStream(st *Stream) error {
	filters, _ := filterList(st.Dict)
	flate := 0
	for _, f := range filters {
		if f != "FlateDecode" && f != "Fl" {
			break
		}
		flate++
	}
	if flate < len(filters) {
		if flate == 0 {
			return nil
		}
		lead := st.Dict.Clone()
		lead["Filter"] = Array{}
		for range flate {
			lead["Filter"] = append(lead["Filter"].(Array), Name("FlateDecode"))
		}
		delete(lead, "DecodeParms")
		st = &Stream{Dict: lead, Data: st.Data}
	}
	_, err := d.decode(st)
	return err
}

// Bytes returns the file the document was read from: the uploaded bytes,
// or those of its repaired structure when Open had to rebuild it.
func (d *Document) Bytes() []byte { return d.data }

// Info returns the trailer's document information dictionary and its
// reference, an empty dictionary and the zero Ref when it has none.
func (d *Document) Info() (Ref, Dict) {
	r, ok := d.xref.trailer["Info"].(Ref)
	if !ok {
		return Ref{}, Dict{}
	}
	info, err := d.Dict(r)
	if err != nil {
		return r, Dict{}
	}
	return r, info
}

// SetInfo makes r the trailer's /Info in the update Save writes.
func (d *Document) SetInfo(r Ref) { d.changes.info = r }
