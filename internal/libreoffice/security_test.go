package libreoffice

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// listener counts the connections made to a loopback port and records
// the first line of each request.
type listener struct {
	ln       net.Listener
	accepted atomic.Int64 // the test's own probes (settle) taken out
	probes   atomic.Int64
	mu       sync.Mutex
	requests []string
	settled  map[string]chan struct{} // by probe line
}

func listen(t *testing.T) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{ln: ln, settled: map[string]chan struct{}{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			go l.record(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return l
}

func (l *listener) record(c net.Conn) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if seen, ok := l.settled[line]; ok {
		l.accepted.Add(-1)
		close(seen)
		return
	}
	l.requests = append(l.requests, strings.TrimSpace(line))
}

// settle returns once the listener has accepted and counted a connection
// the test makes now. The kernel queues connections in the order they
// were made, so every connection made before it (a fetch by an engine
// that has since answered or exited) has been counted by then: a count
// of none means none was made, not one still on its way.
func (l *listener) settle(t *testing.T) {
	t.Helper()
	line := fmt.Sprintf("quire-test-probe %d\n", l.probes.Add(1))
	seen := make(chan struct{})
	l.mu.Lock()
	l.settled[line] = seen
	l.mu.Unlock()
	c, err := net.Dial("tcp", l.ln.Addr().String())
	if err != nil {
		t.Fatalf("the listener: %v", err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, line); err != nil {
		t.Fatalf("the listener: %v", err)
	}
	select {
	case <-seen:
	case <-time.After(time.Minute):
		t.Fatal("the listener did not take the test's own connection within a minute")
	}
}

func (l *listener) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%d connections %q", l.accepted.Load(), l.requests)
}

func (l *listener) url(name string) string { return fmt.Sprintf("http://%s/%s", l.ln.Addr(), name) }

// linkedImageDOCX is a DOCX whose content reaches outside itself: a
// picture linked (not embedded) to imageURL, an INCLUDEPICTURE field and
// an INCLUDETEXT field pointing at fieldURL.
func linkedImageDOCX(imageURL, fieldURL string) []byte {
	return convtest.DOCXBody(linkedImageParts(imageURL, fieldURL))
}

// linkedImageParts returns the body and relationships of linkedImageDOCX.
func linkedImageParts(imageURL, fieldURL string) (string, string) {
	rels := `<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="` + imageURL + `" TargetMode="External"/>`
	picture := `<w:p><w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="952500" cy="952500"/><wp:docPr id="1" name="Picture 1"/>` +
		`<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">` +
		`<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="1" name="x.png"/><pic:cNvPicPr/></pic:nvPicPr>` +
		`<pic:blipFill><a:blip r:link="rId2"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="952500" cy="952500"/></a:xfrm>` +
		`<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`
	field := func(instr string) string {
		return `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> ` + instr +
			` </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>cached</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`
	}
	body := convtest.Paragraphs(1, "remote content test") + picture +
		field(`INCLUDEPICTURE "`+fieldURL+`"`) + field(`INCLUDEPICTURE "`+fieldURL+`" \d`) + field(`INCLUDETEXT "`+fieldURL+`"`)
	return body, rels
}

// writePNG writes a small red PNG and returns its path.
func writePNG(t *testing.T, dir string) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for x := range 16 {
		for y := range 16 {
			img.Set(x, y, color.RGBA{255, 0, 0, 255})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	path := filepath.Join(dir, "secret.png")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// countImages returns the number of images pdfimages finds in pdf.
func countImages(t *testing.T, pdf []byte) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.pdf")
	os.WriteFile(path, pdf, 0o600)
	out, err := exec.Command("pdfimages", "-list", path).Output()
	if err != nil {
		t.Fatalf("pdfimages: %v", err)
	}
	return len(strings.Split(strings.TrimSpace(string(out)), "\n")) - 2 // two header lines
}

// sofficeConvert converts in with a cold `soffice --convert-to pdf` and
// the default profile, and returns the PDF.
func sofficeConvert(t *testing.T, name string, in []byte) []byte {
	t.Helper()
	return sofficeConvertAll(t, map[string][]byte{name: in})[name]
}

// sofficeConvertAll is sofficeConvert for several documents, by name, in
// one soffice run: its start costs seconds.
func sofficeConvertAll(t *testing.T, docs map[string][]byte) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	args := []string{"--convert-to", "pdf", "--outdir", filepath.Join(dir, "out")}
	for name, in := range docs {
		src := filepath.Join(dir, name)
		os.WriteFile(src, in, 0o600)
		args = append(args, src)
	}
	if out, err := soffice(args...); err != nil {
		t.Fatalf("soffice: %v\n%s", err, out)
	}
	pdfs := map[string][]byte{}
	for name := range docs {
		pdf, err := os.ReadFile(filepath.Join(dir, "out", strings.TrimSuffix(name, filepath.Ext(name))+".pdf"))
		if err != nil {
			t.Fatalf("soffice wrote no PDF of %s: %v", name, err)
		}
		pdfs[name] = pdf
	}
	return pdfs
}

// TestNoRemoteOrLocalContentIsFetched converts documents that link to a
// loopback listener and to a local image, and checks that the listener
// receives no connection and that the image does not reach the PDF. As a
// control, the same DOCX through a cold soffice with a default profile
// does contact the listener and embed the image: the test can see a leak.
func TestNoRemoteOrLocalContentIsFetched(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	secret := writePNG(t, t.TempDir())

	// Only control.docx links to the listener: the connections are its.
	control := listen(t)
	pdfs := sofficeConvertAll(t, map[string][]byte{"control.docx": linkedImageDOCX(control.url("x.png"), control.url("field.png")),
		"local.docx": linkedImageDOCX(fileURL(secret), fileURL(secret))})
	control.settle(t)
	if control.accepted.Load() == 0 {
		t.Fatal("control: a default LibreOffice profile did not fetch the linked image; the test cannot detect a leak")
	}
	if countImages(t, pdfs["local.docx"]) == 0 {
		t.Fatal("control: a default LibreOffice profile did not embed the linked local image; the test cannot detect a leak")
	}
	t.Logf("control: default profile made %d connections; its PDF has %d bytes", control.accepted.Load(), len(pdfs["control.docx"]))

	l := listen(t)
	htmlDoc := `<!DOCTYPE html><html><head><link rel="stylesheet" href="` + l.url("style.css") + `">` +
		`<link rel="stylesheet" href="` + fileURL(secret) + `"><meta http-equiv="refresh" content="0; url=` + l.url("refresh") + `">` +
		`<style>@import url(` + l.url("import.css") + `); p { background: url(` + l.url("bg.png") + `) }</style></head>` +
		`<body background="` + l.url("body.png") + `"><p>remote content test</p><img src="` + l.url("img.png") + `"><img src="` + fileURL(secret) + `">` +
		`<frameset><frame src="` + l.url("frame.html") + `"></frameset><video src="` + l.url("v.mp4") + `"></video></body></html>`
	inputs := []struct {
		name, from string
		in         []byte
	}{
		{"remote DOCX", "docx", linkedImageDOCX(l.url("x.png"), l.url("field.png"))},
		{"local DOCX", "docx", linkedImageDOCX(fileURL(secret), fileURL(secret))},
		{"remote DOCX with a comment", "docx", convtest.DOCXWith(convtest.Commented(linkedImageParts(l.url("c.png"), l.url("cfield.png"))))},
		{"local DOCX with a comment", "docx", convtest.DOCXWith(convtest.Commented(linkedImageParts(fileURL(secret), fileURL(secret))))},
		{"HTML", "html", []byte(htmlDoc)},
		{"Markdown", "md", []byte("# md\n\n![remote](" + l.url("md.png") + ")\n\n![local](" + secret + ")\n")},
	}
	for _, c := range inputs {
		r, err := p.ConvertTimed(context.Background(), c.in, c.from)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Cold {
			t.Errorf("%s: converted cold, want the warm engine", c.name)
		}
		if n := countImages(t, r.Output); n != 0 {
			t.Errorf("%s: the PDF holds %d images; linked content was loaded", c.name, n)
		}
	}
	// The cold soffice, which converts what LibreOfficeKit refuses, has the
	// same profile.
	for name, in := range map[string][]byte{"remote DOCX, cold": linkedImageDOCX(l.url("cold.png"), l.url("cfield.png")),
		"local DOCX, cold": linkedImageDOCX(fileURL(secret), fileURL(secret))} {
		o := &Options{PoolOptions: engine.PoolOptions{Executable: os.Args[0], WorkerArgs: []string{"quire-test-worker", "lok"}}, ProgramDir: DefaultProgramDir}
		pdf, _, _, err := coldConvert(context.Background(), o, t.TempDir(), in, engine.FromDOCX, engine.ToPDF, pdfExportOptions, time.Minute)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := countImages(t, pdf); n != 0 {
			t.Errorf("%s: the PDF holds %d images; linked content was loaded", name, n)
		}
	}
	l.settle(t)
	if n := l.accepted.Load(); n != 0 {
		t.Errorf("the loopback listener received %d connections from the engine, want none: %v", n, l)
	}
}

// TestLinksDoNotNameServerPaths converts a document with a relative link,
// which LibreOffice resolves against the job's directory on the server:
// the PDF must link to the relative name, not into that directory. (The
// corpus test checks the same on real DOCX files. The cold soffice gets
// the same export options, but writes no links for documents as small as
// this one, so this test cannot see it.)
func TestLinksDoNotNameServerPaths(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	pdf, err := p.Convert(context.Background(), []byte(`<html><body><p><a href="other.docx">a relative link</a></p></body></html>`), engine.FromHTML)
	if err != nil {
		t.Fatal(err)
	}
	if uris := linkURIs(t, pdf); len(uris) != 1 || uris[0] != "other.docx" {
		t.Errorf("the PDF links to %q, want [other.docx]", uris)
	}
}

// linkURIs returns the URIs of the link annotations of pdf.
func linkURIs(t *testing.T, pdf []byte) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "links.pdf")
	os.WriteFile(path, pdf, 0o600)
	out, err := exec.Command("qpdf", "--qdf", "--object-streams=disable", path, "-").Output()
	if err != nil {
		t.Fatalf("qpdf: %v", err)
	}
	var uris []string
	for _, m := range regexp.MustCompile(`/URI \(([^)]*)\)`).FindAllSubmatch(out, -1) {
		uris = append(uris, string(m[1]))
	}
	return uris
}
