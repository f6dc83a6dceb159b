package pdfsign

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// disablePDFCPUConfig stops pdfcpu from creating a configuration directory
// under the user's home on first use: a server must not write there.
var disablePDFCPUConfig sync.Once

// openForUpdate reads pdf so that an incremental update can be added. A
// file whose structure is damaged is rewritten cleanly by pdfcpu first,
// unless it already carries a signature: the rewrite would invalidate it,
// so that case is refused with ErrDamagedSigned.
func openForUpdate(pdf []byte, lim Limits) (*document, error) {
	d, err := readSound(pdf, lim)
	if err == nil || !errors.Is(err, errStructure) {
		return d, err
	}
	if bytes.Contains(pdf, []byte("/ByteRange")) {
		return nil, fmt.Errorf("%w: %v", ErrDamagedSigned, err)
	}
	fixed, rerr := rewrite(pdf, lim.withDefaults())
	if rerr != nil {
		return nil, fmt.Errorf("%w (while repairing: %v)", rerr, err)
	}
	d, err = readSound(fixed, lim)
	if err != nil {
		return nil, fmt.Errorf("%w: repaired file still unusable: %v", ErrUnreadable, err)
	}
	return d, nil
}

// readSound reads pdf and checks that its page tree can be walked and
// holds at least one page, so that an update has somewhere to go.
func readSound(pdf []byte, lim Limits) (*document, error) {
	d, err := readDocument(pdf, lim)
	if err != nil {
		return nil, err
	}
	pages, err := d.pages()
	if err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		return nil, structuref("document has no pages")
	}
	return d, nil
}

// rewrite has pdfcpu read pdf (it reconstructs damaged cross-reference
// data) and write it out again as a clean file. pdfcpu panics on some
// hostile input; that is turned into ErrUnreadable.
func rewrite(pdf []byte, lim Limits) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w: pdfcpu failed: %v", ErrUnreadable, r)
		}
	}()
	disablePDFCPUConfig.Do(api.DisableConfigDir)
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	conf.Cmd = model.ADDSIGNATURE // makes pdfcpu refuse encrypted input
	conf.Limits.MaxStreamBytes = lim.MaxInputSize
	conf.Limits.MaxDecodeBytes = lim.MaxDecodedSize
	conf.Limits.MaxObjectCount = lim.MaxObjects
	conf.Limits.MaxXRefEntries = lim.MaxObjects
	ctx, err := api.ReadContext(bytes.NewReader(pdf), conf)
	if errors.Is(err, pdfcpu.ErrEncrypted) || (err == nil && ctx.Encrypt != nil) {
		return nil, ErrEncrypted
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	var buf bytes.Buffer
	if err := api.WriteContext(ctx, &buf); err != nil {
		return nil, fmt.Errorf("%w: rewriting: %v", ErrUnreadable, err)
	}
	return buf.Bytes(), nil
}
