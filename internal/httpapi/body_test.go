package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// rawPost sends a POST whose head declares the whole of body, then only
// its first half; then it closes its side of the connection (cut), or
// leaves it open until the server gives up on it (stalled). It returns
// the server's answer.
func (e *env) rawPost(path string, header map[string]string, body []byte, cut bool) response {
	e.t.Helper()
	u, _ := url.Parse(e.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close()
	var head strings.Builder
	fmt.Fprintf(&head, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", path, u.Host, len(body))
	for k, v := range header {
		fmt.Fprintf(&head, "%s: %s\r\n", k, v)
	}
	head.WriteString("\r\n")
	if _, err := io.WriteString(conn, head.String()); err != nil {
		e.t.Fatal(err)
	}
	if _, err := conn.Write(body[:len(body)/2]); err != nil {
		e.t.Fatal(err)
	}
	if cut {
		conn.(*net.TCPConn).CloseWrite()
	}
	conn.SetReadDeadline(time.Now().Add(time.Minute)) // a hung server fails the test instead of hanging it
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		e.t.Fatalf("%s: no answer: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}
}

// TestBodyNotReceivedIsTheClientsFault sends every route that reads a
// body one that is cut short and one that stops arriving: each gets 400
// VALIDATION_ERROR naming the body, and the server logs no error.
func TestBodyNotReceivedIsTheClientsFault(t *testing.T) {
	docx, err := os.ReadFile("../../../shared/corpus/docx/python-docx__tbl-2x2-table.docx")
	if err != nil {
		t.Skip("the shared corpus is not here (../shared/corpus): ", err)
	}
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConfig(func(c *apitest.Config) {
		c.ReadTimeout = time.Second // the stalled bodies below wait this long
	}), withConversion())
	key := e.key("body@example.com")
	pdf := pdftest.OnePage("cut")
	verifyForm, verifyType := multipartFile("file", "a.pdf", pdf)
	convertForm, convertType := multipartFile("file", "a.docx", docx)
	routes := []struct {
		name, path string
		header     map[string]string
		body       []byte
	}{
		{"sign", "/v1/sign", map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}, []byte(signBody(inline(pdf)))},
		{"verify JSON", "/v1/verify", map[string]string{"Content-Type": "application/json"},
			[]byte(`{"document":{"base64":"` + base64.StdEncoding.EncodeToString(pdf) + `"}}`)},
		{"verify multipart", "/v1/verify", map[string]string{"Content-Type": verifyType}, verifyForm},
		{"convert", "/v1/convert?from=docx", map[string]string{"Authorization": "Bearer " + key, "Content-Type": convertType}, convertForm},
		{"collect", "/v1/collect", map[string]string{"Content-Type": "application/json", "X-License-Key": "lic-1"}, []byte(deployedPayload("doc-1"))},
	}
	for _, rt := range routes {
		for _, c := range []struct {
			cut   bool
			issue string
		}{{true, "was cut short"}, {false, "stopped arriving"}} {
			t.Run(rt.name+"/"+c.issue, func(t *testing.T) {
				b := e.rawPost(rt.path, rt.header, rt.body, c.cut).errorBody(t, 400, "VALIDATION_ERROR")
				if len(b.Details) != 1 || b.Details[0].Field != "body" || b.Details[0].Issue != c.issue {
					t.Errorf("details %+v, want body %q", b.Details, c.issue)
				}
			})
		}
	}
	if logs := e.Logs.String(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("bodies not received are logged as errors:\n%s", logs)
	}
}

func multipartFile(field, name string, content []byte) ([]byte, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile(field, name)
	fw.Write(content)
	mw.Close()
	return body.Bytes(), mw.FormDataContentType()
}
