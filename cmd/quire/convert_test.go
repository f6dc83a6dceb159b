package main

import (
	"bytes"
	"encoding/base64"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quire-dev/quire/internal/libreoffice/pdfatest"
)

// requireConvertEngine fails (not skips) when LibreOffice or pdfinfo is
// missing, naming the Debian packages.
func requireConvertEngine(t *testing.T) {
	t.Helper()
	_, lo := os.Stat("/usr/lib/libreoffice/program/libmergedlo.so")
	_, info := exec.LookPath("pdfinfo")
	if lo != nil || info != nil {
		t.Fatal("quire convert needs LibreOffice and poppler-utils: apt-get install libreoffice-writer-nogui " +
			"libreofficekit-dev fonts-crosextra-carlito fonts-crosextra-caladea fonts-liberation2 fonts-dejavu poppler-utils qpdf")
	}
}

func TestConvertCommand(t *testing.T) {
	requireConvertEngine(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "notes.md")
	os.WriteFile(in, []byte("# Notes\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"), 0o600)
	out := filepath.Join(dir, "notes.pdf")
	var stdout, stderr bytes.Buffer
	if code := runConvert([]string{in, "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("quire convert exited %d: %s", code, stderr.String())
	}
	info, err := exec.Command("pdfinfo", out).Output()
	if err != nil || !strings.Contains(string(info), "Pages:           1") {
		t.Errorf("pdfinfo %s: %v\n%s", out, err, info)
	}
}

func TestConvertCommandErrors(t *testing.T) {
	dir := t.TempDir()
	pdf := filepath.Join(dir, "a.pdf")
	os.WriteFile(pdf, []byte("%PDF-1.7\n"), 0o600)
	deep := filepath.Join(dir, "deep.md") // for Chromium, refused by the checks before it (once: Pool.Convert's)
	os.WriteFile(deep, []byte(strings.Repeat(">", 100_000)+" x\n"), 0o600)
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{pdf}, 2, "usage: quire convert"},
		{[]string{"-o", filepath.Join(dir, "out.pdf")}, 2, "usage: quire convert"},
		{[]string{pdf, "-o", filepath.Join(dir, "out.pdf"), "--from", "docx"}, 1, "not a document of the declared format"},
		{[]string{pdf, "-o", filepath.Join(dir, "out.pdf")}, 1, "cannot tell the format of"},
		{[]string{filepath.Join(dir, "missing.docx"), "-o", filepath.Join(dir, "out.pdf")}, 1, "no such file"},
		{[]string{deep, "-o", filepath.Join(dir, "out.pdf")}, 1, "(QUIRE_CONVERT_MAX_"},
	} {
		var stdout, stderr bytes.Buffer
		code := runConvert(c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.says) {
			t.Errorf("quire convert %q: exit %d, stderr %q; want exit %d saying %q", c.args, code, stderr.String(), c.code, c.says)
		}
	}
}

// TestConvertCommandLoadsNothingOutside: quire convert starts its worker
// from this program, not from the server, and must keep documents inside
// as the server does (internal/libreoffice's resource table has every case):
// an HTML page whose style sheet names a loopback listener and whose
// inline SVG draws a local image, and an RTF document whose field
// includes a local text.
func TestConvertCommandLoadsNothingOutside(t *testing.T) {
	requireConvertEngine(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var connections atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			connections.Add(1)
			c.Close()
		}
	}()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	os.WriteFile(secret, []byte("QUIRECANARY the server's secret\n"), 0o600)
	svg := `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"><image href="file://` + secret + `" width="100" height="40"/></svg>`
	docs := map[string]string{
		"page.html": `<html><head><style>body { background: url(http://` + ln.Addr().String() + `/bg.png) }</style></head><body><p>page</p>` +
			`<img src="data:image/svg+xml;base64,` + base64.StdEncoding.EncodeToString([]byte(svg)) + `"></body></html>`,
		"letter.rtf": `{\rtf1\ansi letter\par {\field{\*\fldinst INCLUDETEXT "` + secret + `"}{\fldrslt cached}}\par}`,
	}
	for name, body := range docs {
		in, out := filepath.Join(dir, name), filepath.Join(dir, name+".pdf")
		os.WriteFile(in, []byte(body), 0o600)
		var stdout, stderr bytes.Buffer
		if code := runConvert([]string{in, "-o", out}, &stdout, &stderr); code != 0 {
			t.Fatalf("quire convert %s exited %d: %s", name, code, stderr.String())
		}
		text, err := exec.Command("pdftotext", out, "-").Output()
		if err != nil {
			t.Fatalf("pdftotext: %v", err)
		}
		if bytes.Contains(text, []byte("QUIRECANARY")) {
			t.Errorf("%s: the PDF holds the local file's text", name)
		}
	}
	if n := connections.Load(); n != 0 {
		t.Errorf("the listener received %d connections", n)
	}
}

// TestConvertCommandOptions: the options of POST /v1/convert, by the same
// names, reach the engine; bad ones are refused before LibreOffice starts.
func TestConvertCommandOptions(t *testing.T) {
	requireConvertEngine(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "notes.md")
	os.WriteFile(in, []byte("# Notes\n\n"+strings.Repeat("Some text. ", 2000)+"\n"), 0o600)
	out := filepath.Join(dir, "notes.pdf")
	var stdout, stderr bytes.Buffer
	if code := runConvert([]string{in, "-o", out, "-pdfa", "PDF/A-2b", "-landscape", "-pageRanges", "1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("quire convert exited %d: %s", code, stderr.String())
	}
	pdf, _ := os.ReadFile(out)
	pdfatest.Check(t, pdf, 2)
	info, _ := exec.Command("pdfinfo", out).Output()
	size := regexp.MustCompile(`(?m)^Page size:\s+([\d.]+) x ([\d.]+)`).FindSubmatch(info)
	if !regexp.MustCompile(`(?m)^Pages:\s+1$`).Match(info) || size == nil || atof(size[1]) <= atof(size[2]) {
		t.Errorf("want one landscape page:\n%s", info)
	}
	stderr.Reset()
	code := runConvert([]string{in, "-o", out, "-pdfa", "PDF/A-9", "-quality", "0", "-maxImageResolution", "100"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "pdfa must be one of") || !strings.Contains(stderr.String(), "maxImageResolution must be one of") {
		t.Errorf("bad options: exit %d, stderr %q", code, stderr.String())
	}
}

func atof(b []byte) float64 {
	f, _ := strconv.ParseFloat(string(b), 64)
	return f
}
