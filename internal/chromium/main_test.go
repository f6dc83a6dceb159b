package chromium

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/engine/enginetest"
)

// TestMain runs the test binary as the program that confines the browser
// when the pool starts it so (Options.Executable, WorkerArgs).
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "quire-test-worker" && os.Args[2] == "confine" {
		if code, asked := engine.RunConfined(false); asked {
			os.Exit(code)
		}
		fmt.Fprintln(os.Stderr, "quire-test-worker confine: started without a program to confine (engine.Confine)")
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// needChromium fails the test, naming the package, when the browser is
// not installed.
func needChromium(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(DefaultPath()); err != nil {
		t.Fatalf("%s is missing: apt-get install chromium-headless-shell (or chromium)", DefaultPath())
	}
}

// shared is the pool of the tests that need only a browser with the
// default options of newPool. The tests that count the pool's jobs, kill
// its browser, watch its shared tab or change its options start their
// own.
var shared = enginetest.Shared[*Pool]{
	Start: func(dir string) (*Pool, error) {
		p, err := startPool(dir, 1, nil)
		if err != nil && p != nil {
			closePool(p)
		}
		return p, err
	},
	Close: closePool,
}

// sharedPool returns the shared pool, held by t (see enginetest.Shared).
func sharedPool(t *testing.T) *Pool {
	t.Helper()
	needChromium(t)
	return shared.Get(t)
}

// newPool starts a pool of n confined browsers for the test, and waits
// until they are ready.
func newPool(t testing.TB, n int, adjust func(*Options)) *Pool {
	t.Helper()
	needChromium(t)
	p, err := startPool(t.TempDir(), n, adjust)
	if p != nil {
		t.Cleanup(func() {
			if err := closePool(p); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startPool starts a pool of n confined browsers working in dir, and
// waits until they are ready. It returns the pool, to be closed, even
// when they are not.
func startPool(dir string, n int, adjust func(*Options)) (*Pool, error) {
	o := Options{PoolOptions: engine.PoolOptions{Workers: n, JobTimeout: 60 * time.Second, StartTimeout: 2 * time.Minute, Executable: os.Args[0],
		WorkerArgs: []string{"quire-test-worker", "confine"}}, Dir: dir}
	if adjust != nil {
		adjust(&o)
	}
	p, err := NewPool(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return p, p.WaitReady(ctx)
}

func closePool(p *Pool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a browser may be starting, slowly on a loaded machine
	defer cancel()
	return p.Close(ctx)
}

// word is a word of a PDF page with its box, in points from the top left,
// as pdftotext -bbox reports it.
type word struct {
	Text                   string
	XMin, YMin, XMax, YMax float64
}

// pdfWords returns the words of each page of pdf, read by pdftotext
// (poppler-utils).
func pdfWords(t testing.TB, pdf []byte) [][]word {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatal("pdftotext is missing: apt-get install poppler-utils")
	}
	cmd := exec.Command("pdftotext", "-bbox", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	var doc struct {
		Pages []struct {
			Words []struct {
				Text string  `xml:",chardata"`
				XMin float64 `xml:"xMin,attr"`
				YMin float64 `xml:"yMin,attr"`
				XMax float64 `xml:"xMax,attr"`
				YMax float64 `xml:"yMax,attr"`
			} `xml:"word"`
		} `xml:"body>doc>page"`
	}
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("pdftotext's output: %v\n%s", err, out)
	}
	pages := make([][]word, len(doc.Pages))
	for i, p := range doc.Pages {
		for _, w := range p.Words {
			pages[i] = append(pages[i], word{w.Text, w.XMin, w.YMin, w.XMax, w.YMax})
		}
	}
	return pages
}

func writeFile(name string, data []byte) error { return os.WriteFile(name, data, 0o600) }
