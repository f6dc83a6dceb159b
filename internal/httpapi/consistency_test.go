package httpapi_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestOneAnswerForOneFault sends the same bad files to /v1/convert and to
// /v1/sign: a DOCX whose ZIP is damaged is an unprocessable document (422)
// on both, a file that is no document at all an invalid format (400).
func TestOneAnswerForOneFault(t *testing.T) {
	docx, err := os.ReadFile("../../../shared/corpus/docx/python-docx__tbl-2x2-table.docx")
	if err != nil {
		t.Skip("the shared corpus is not here (../shared/corpus): ", err)
	}
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion())
	key := e.key("same@example.com")
	for _, c := range []struct {
		name   string
		file   []byte
		status int
		code   string
	}{
		{"damaged DOCX", docx[:len(docx)/2], 422, "UNPROCESSABLE_DOCUMENT"},
		{"plain text", []byte("neither a PDF nor a DOCX"), 400, "INVALID_FILE_FORMAT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			form, ctype := multipartFile("file", "in.docx", c.file)
			conv := e.do("POST", "/v1/convert?from=docx", bytes.NewReader(form), map[string]string{"Authorization": "Bearer " + key, "Content-Type": ctype}).
				errorBody(t, c.status, c.code)
			sign := e.signPDF(key, signBody(inline(c.file))).errorBody(t, c.status, c.code)
			if c.status == 422 && sign.Message != conv.Message {
				t.Errorf("two messages for one fault:\n  convert: %s\n  sign:    %s", conv.Message, sign.Message)
			}
		})
	}
}
