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
	Words    map[string]string // examinerWords, for the page's script
}

// examinerWords say the verdict's terms (ETSI indications and
// sub-indications, change classes) in plain words: the page renders them
// and its script reads the same table from the page.
var examinerWords = map[string]string{
	"TOTAL_PASSED":                      "passed every check",
	"INDETERMINATE":                     "could not be confirmed",
	"TOTAL_FAILED":                      "failed",
	"FORMAT_FAILURE":                    "the signature, or what was changed after it, breaks the rules",
	"HASH_FAILURE":                      "the signed content was altered",
	"SIG_CRYPTO_FAILURE":                "the cryptographic signature does not hold",
	"NO_SIGNING_CERTIFICATE_FOUND":      "the signer's certificate is missing",
	"NO_CERTIFICATE_CHAIN_FOUND":        "the signer (or time-stamp authority) is not one this server trusts",
	"CERTIFICATE_CHAIN_GENERAL_FAILURE": "the document holds no revocation data for the signer's certificates",
	"REVOKED":                           "the signer's certificate was revoked before it signed",
	"REVOKED_NO_POE":                    "the signer's certificate was revoked, and nothing proves it signed before",
	"OUT_OF_BOUNDS_NO_POE":              "the certificate has expired, and no trusted time-stamp proves it signed while valid",
	"OUT_OF_BOUNDS_NOT_REVOKED":         "the certificate has expired, and no trusted time-stamp proves it signed while valid",
	"CRYPTO_CONSTRAINTS_FAILURE_NO_POE": "it uses an algorithm no longer safe for signatures",
	"ltv":                               "validation data or a time-stamp",
	"form":                              "a form filled in",
	"annotations":                       "a comment or other annotation",
	"signature":                         "another signature",
	"other":                             "content, pages or structure",
}

// words looks a term up in examinerWords; a term it lacks stays as it is.
func words(term string) string {
	if w, ok := examinerWords[term]; ok {
		return w
	}
	return term
}

// verifyPage serves the form. Its script posts the file to /v1/verify and
// shows the answer; without JavaScript the form posts to verifyForm.
func (p *Pages) verifyPage(w http.ResponseWriter, r *http.Request) {
	p.render(w, http.StatusOK, "verify", verifyData{MaxBytes: p.deps.Signing.MaxDocumentBytes(), Words: examinerWords})
}

// verifyForm verifies the uploaded PDF and renders the result. The file
// is read into memory only: nothing uploaded is stored.
func (p *Pages) verifyForm(w http.ResponseWriter, r *http.Request) {
	data := verifyData{MaxBytes: p.deps.Signing.MaxDocumentBytes(), Words: examinerWords}
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
