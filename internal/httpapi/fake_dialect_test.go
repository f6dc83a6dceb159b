package httpapi_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
)

// plainDialect is another API's way (as internal/gotenberg's): the key in
// X-Key, refused when X-Key is "bad"; errors as plain text.
var plainDialect = &httpapi.Dialect{
	Key: func(r *http.Request) (string, error) {
		if k := r.Header.Get("X-Key"); k != "bad" {
			return k, nil
		}
		return "", quire.Errorf(quire.CodeAuthentication, "X-Key is not a key.")
	},
	Fail: func(w http.ResponseWriter, r *http.Request, status int, qe *quire.Error) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "%d %s", status, qe.Message)
	},
}

// formZIP is a foreign route's handler: the form's files in a ZIP, named
// as POST /v1/convert names them, with what it knows of the request in
// headers.
func formZIP(w http.ResponseWriter, r *http.Request) {
	form, err := httpapi.ReadForm(r, 2)
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	names := make([]string, len(form.Files))
	outs := make([][]byte, len(form.Files))
	for i, f := range form.Files {
		names[i], outs[i] = f.Name, f.Data
	}
	z, err := httpapi.ZIP(names, "pdf", outs)
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	key, _ := httpapi.APIKey(r.Context())
	w.Header().Set("X-Trace", httpapi.RequestID(r.Context()))
	w.Header().Set("X-Key-Id", key.ID)
	w.Header().Set("X-Fields", strings.Join(form.Fields, ","))
	w.Header().Set("X-Values", strings.Join(form.Values["mode"], ","))
	if len(names) > 0 {
		w.Header().Set("X-Base", httpapi.FileBase(names[0]))
	}
	w.Write(z)
}

func dialectAPI(t *testing.T) *fakeAPI {
	f := newFakes()
	f.foreign = []httpapi.Route{
		{Method: "POST", Path: "/forms/zip", Handler: formZIP, Dialect: plainDialect, MaxBody: 4 << 20},
		{Method: "GET", Path: "/forms/public", Handler: formZIP, Dialect: &httpapi.Dialect{Fail: plainDialect.Fail}},
	}
	return f.serve(t)
}

// form is a multipart body of files (field, name, content) and of the
// text field mode.
func form(t *testing.T, mode string, files ...[3]string) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range files {
		p, err := w.CreateFormFile(f[0], f[1])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(p, f[2])
	}
	if mode != "" {
		w.WriteField("mode", mode)
	}
	w.Close()
	return &b, w.FormDataContentType()
}

// TestFakeDialectKeysAndErrors: a route of another API finds its key its
// own way (none: served without one; one quire does not know: 401), and
// every error it answers, quire's own included, is in its form, not in
// the error body.
func TestFakeDialectKeysAndErrors(t *testing.T) {
	t.Parallel()
	a := dialectAPI(t)
	post := func(key string, body io.Reader, contentType string) response {
		return a.send("POST", "/forms/zip", body, "X-Key", key, "Content-Type", contentType, "Gotenberg-Trace", "trace-1")
	}
	body, ct := form(t, "fast", [3]string{"files", `C:\docs\a.docx`, "A"}, [3]string{"other", "a.docx", "B"})
	r := post("", body, ct)
	if r.status != 200 || r.header.Get("X-Key-Id") != "" || r.header.Get("X-Trace") != "trace-1" || r.header.Get("X-Request-Id") != "trace-1" ||
		r.header.Get("X-Fields") != "files,other" || r.header.Get("X-Values") != "fast" || r.header.Get("X-Base") != "a" {
		t.Fatalf("anonymous: %d %v %s", r.status, r.header, r.body)
	}
	zr, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	if strings.Join(names, "|") != "a (2).pdf|a.pdf" {
		t.Errorf("ZIP entries %q", names)
	}
	body, ct = form(t, "", [3]string{"files", "a.docx", "A"})
	if r := post(goodKey, body, ct); r.status != 200 || r.header.Get("X-Key-Id") != fakeKey.ID {
		t.Errorf("with the key: %d %v", r.status, r.header)
	}
	for key, want := range map[string]string{"qk_wrong": "401 Invalid API key.", "bad": "401 X-Key is not a key."} {
		body, ct = form(t, "", [3]string{"files", "a.docx", "A"})
		if r := post(key, body, ct); r.status != 401 || string(r.body) != want || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
			t.Errorf("key %q: %d %q", key, r.status, r.body)
		}
	}
	if r := a.send("GET", "/forms/public", nil, "X-Key", "bad"); r.status != 415 || !strings.HasPrefix(string(r.body), "415 ") {
		t.Errorf("a public route of the dialect: %d %q", r.status, r.body)
	}
}

// TestFakeDialectForm: ReadForm takes files under any field name, at
// most maxFiles of them and none empty, and text fields of at most
// 1 MiB together; a body that is not multipart is 415.
func TestFakeDialectForm(t *testing.T) {
	t.Parallel()
	a := dialectAPI(t)
	for _, c := range []struct {
		mode  string
		files [][3]string
		want  string
	}{
		{"", [][3]string{{"f", "a.pdf", "A"}, {"f", "b.pdf", "B"}, {"f", "c.pdf", "C"}}, "400 The request has too many files."},
		{"", [][3]string{{"f", "a.pdf", ""}}, "400 The file is empty."},
		{strings.Repeat("m", 1<<20+1), nil, "400 The form's text fields are too large."},
	} {
		body, ct := form(t, c.mode, c.files...)
		if r := a.send("POST", "/forms/zip", body, "Content-Type", ct); r.status != 400 || string(r.body) != c.want {
			t.Errorf("%d %q, want %q", r.status, r.body, c.want)
		}
	}
	if r := a.send("POST", "/forms/zip", strings.NewReader("{}"), "Content-Type", "application/json"); r.status != 415 {
		t.Errorf("JSON body: %d %q", r.status, r.body)
	}
	r := a.send("POST", "/forms/zip", strings.NewReader("--x\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.pdf\"\r\n\r\nA"),
		"Content-Type", "multipart/form-data; boundary=x")
	if r.status != 400 || !strings.HasPrefix(string(r.body), "400 The multipart body is malformed.") {
		t.Errorf("a part cut short: %d %q", r.status, r.body)
	}
}

// laterDialect is plainDialect whose requests with X-Later run as jobs,
// delivered to the address X-Later names, X-Bad refused, and accepted
// with 204 and the job's id in X-Job.
var laterDialect = &httpapi.Dialect{
	Key:  plainDialect.Key,
	Fail: plainDialect.Fail,
	Async: func(r *http.Request) ([]httpapi.Webhook, bool, error) {
		if r.Header.Get("X-Bad") != "" {
			return nil, false, quire.Invalid("The request is not valid.", quire.Detail{Field: "X-Bad", Issue: "is refused"})
		}
		if url := r.Header.Get("X-Later"); url != "" {
			return []httpapi.Webhook{{Header: "X-Later", URL: url}}, true, nil
		}
		return nil, false, nil
	},
	Accepted: func(w http.ResponseWriter, r *http.Request, j quire.Job) {
		w.Header().Set("X-Job", j.ID+" "+j.Webhook.URL)
		w.WriteHeader(http.StatusNoContent)
	},
}

// TestFakeDialectAsync: a dialect that asks for jobs its own way has its
// requests stored as jobs and answered its way; without a jobs service
// they are refused (503), not run at once; its refusals are its errors;
// and a job's run of the request runs it, not asks for a job again.
func TestFakeDialectAsync(t *testing.T) {
	t.Parallel()
	for _, withJobs := range []bool{true, false} {
		f := newFakes()
		jobs := &fakeJobs{}
		if withJobs {
			f.jobs = jobs
		}
		f.foreign = []httpapi.Route{{Method: "POST", Path: "/forms/zip", Handler: formZIP, Dialect: laterDialect, MaxBody: 4 << 20, Async: true, Metered: quire.OpConvert}}
		a := f.serve(t)
		body, ct := form(t, "", [3]string{"files", "a.pdf", "%PDF-"})
		r := a.send("POST", "/forms/zip", body, "Content-Type", ct, "X-Key", goodKey, "X-Later", "https://hooks.example/done")
		switch {
		case withJobs && (r.status != http.StatusNoContent || r.header.Get("X-Job") != "j1 https://hooks.example/done" || len(jobs.submitted) != 1):
			t.Errorf("with jobs: %d %v, %d submitted; want 204 with the job and its webhook", r.status, r.header, len(jobs.submitted))
		case !withJobs && (r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "disabled on this server")):
			t.Errorf("without jobs: %d %q, want the dialect's 503", r.status, r.body)
		}
		body, ct = form(t, "", [3]string{"files", "a.pdf", "%PDF-"})
		if r := a.send("POST", "/forms/zip", body, "Content-Type", ct, "X-Key", goodKey, "X-Bad", "1"); r.status != 400 || string(r.body) != "400 The request is not valid." {
			t.Errorf("refused by the dialect: %d %q", r.status, r.body)
		}
		if !withJobs {
			continue
		}
		res, err := a.api.RunJob(t.Context(), quire.Job{ID: "j1", KeyID: "k1"}, jobs.submitted[0])
		if err != nil || res.Status != http.StatusOK || !bytes.HasPrefix(res.Body, []byte("PK")) {
			t.Errorf("the job's run: %v %d %.40q, want the handler's ZIP", err, res.Status, res.Body)
		}
	}
}
