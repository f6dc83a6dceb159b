package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"os"
	"strings"
	"testing"
)

// corpusDOCX is a small real DOCX from the shared corpus.
func corpusDOCX(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../../shared/corpus/docx/python-docx__tbl-2x2-table.docx")
	if err != nil {
		t.Skip("the shared corpus is not here (../shared/corpus): ", err)
	}
	return b
}

func multipartFile(name string, content []byte) (*bytes.Buffer, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(content)
	mw.Close()
	return &body, mw.FormDataContentType()
}

// TestConvertAndSignDOCXThroughTheService runs the service with one warm
// LibreOffice worker: POST /v1/convert answers a PDF, and POST /v1/sign
// takes a DOCX and answers a signed PDF.
func TestConvertAndSignDOCXThroughTheService(t *testing.T) {
	requireConvertEngine(t)
	docx := corpusDOCX(t)
	data := t.TempDir()
	in := start(t, data, "QUIRE_CONVERT_WORKERS=1")
	key := issueKey(t, in, in, "conv@example.com")
	auth := []string{"Authorization", "Bearer " + key}

	body, ctype := multipartFile("table.docx", docx)
	st, pdf := in.do("POST", "/v1/convert?from=docx", body, append(auth, "Content-Type", ctype)...)
	if st != 200 || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("convert: %d %.200s", st, pdf)
	}
	body, ctype = multipartFile("table.docx", []byte("plain text, not a DOCX"))
	if st, b := in.do("POST", "/v1/convert?from=docx", body, append(auth, "Content-Type", ctype)...); st != 400 || !strings.Contains(string(b), "INVALID_FILE_FORMAT") {
		t.Errorf("a text file as DOCX: %d %s", st, b)
	}
	body, ctype = multipartFile("table.docx", docx)
	if st, b := in.do("POST", "/v1/convert?from=xlsx", body, append(auth, "Content-Type", ctype)...); st != 400 || !strings.Contains(string(b), "it looks like a Word document (docx)") {
		t.Errorf("a DOCX as from=xlsx: %d %s", st, b)
	}
	body, ctype = multipartFile("table.docx", docx)
	if st, b := in.do("POST", "/v1/convert?from=pages", body, append(auth, "Content-Type", ctype)...); st != 400 || !strings.Contains(string(b), `"field":"from"`) {
		t.Errorf("from=pages: %d %s", st, b)
	}
	body, ctype = multipartFile("table.docx", docx)
	if st, b := in.do("POST", "/v1/convert", body, append(auth, "Content-Type", ctype)...); st != 200 || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Errorf("no from, told from the file: %d %.200s", st, b)
	}

	req := `{"document":{"base64":"` + base64.StdEncoding.EncodeToString(docx) + `"},"signer":{"email":"d@example.com","name":"Dora"},
		"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}]}`
	st, b := in.do("POST", "/v1/sign", strings.NewReader(req), append(auth, "Content-Type", "application/json")...)
	var res struct {
		Document struct{ Base64, ContentType string }
	}
	if st != 200 || json.Unmarshal(b, &res) != nil || res.Document.ContentType != "application/pdf" {
		t.Fatalf("sign a DOCX: %d %.300s", st, b)
	}
	signed, _ := base64.StdEncoding.DecodeString(res.Document.Base64)
	if !bytes.HasPrefix(signed, []byte("%PDF-")) {
		t.Fatal("the signed DOCX is not a PDF")
	}
	body, ctype = multipartFile("signed.pdf", signed)
	st, b = in.do("POST", "/v1/verify", body, "Content-Type", ctype)
	if st != 200 || !strings.Contains(string(b), `"valid":true`) {
		t.Errorf("verify the signed DOCX: %d %s", st, b)
	}
	// The signing's count, committed with its record, includes the
	// conversion on the way: two converts and the sign's DOCX.
	for _, k := range apiUsageCLI(t, data, nil).Keys {
		if len(k.Periods) != 1 {
			t.Fatalf("usage periods: %+v", k.Periods)
		}
		ops := k.Periods[0].Operations
		if ops.Sign.Requests != 1 || ops.Sign.Documents != 1 || ops.Sign.Pages < 2 || ops.Convert.Requests != 2 || ops.Convert.Documents != 3 {
			t.Errorf("usage of %s: %+v", k.Email, ops)
		}
	}
	if st, b := in.get("/v1/health"); st != 200 || !strings.Contains(string(b), "1/1 workers ready") {
		t.Errorf("health does not report the worker: %d %s", st, b)
	}
}
