package web

import (
	"net/http"

	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/signing"
)

// verifyData is what the verification page shows.
type verifyData struct {
	Result   *signing.VerifyResult
	Error    string
	MaxBytes int64
}

// verifyPage serves the form. Its script posts the file to /v1/verify and
// shows the answer; without JavaScript the form posts to verifyForm.
func (p *Pages) verifyPage(w http.ResponseWriter, r *http.Request) {
	p.render(w, http.StatusOK, "verify", verifyData{MaxBytes: p.deps.Signing.MaxDocumentBytes()})
}

// verifyForm verifies the uploaded PDF and renders the result. The file
// is read into memory only: nothing uploaded is stored.
func (p *Pages) verifyForm(w http.ResponseWriter, r *http.Request) {
	data := verifyData{MaxBytes: p.deps.Signing.MaxDocumentBytes()}
	pdf, err := httpapi.FilePart(r, "file")
	if err == nil {
		var res signing.VerifyResult
		if res, err = p.deps.Signing.Verify(r.Context(), signing.Document{Bytes: pdf}); err == nil {
			data.Result = &res
			p.render(w, http.StatusOK, "verify", data)
			return
		}
	}
	p.fail(w, r, "verify", func(msg string) any { data.Error = msg; return data }, err)
}
