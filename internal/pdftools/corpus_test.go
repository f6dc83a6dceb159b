package pdftools

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// TestCorpusThroughEveryOperation passes every PDF of the shared corpus
// through every operation: each gives a result or a client error, never a
// server fault; a PDF result is read back by quire's reader. The files
// are parallel subtests of one service, as a server's requests are: while
// one waits for its worker process, another is read.
func TestCorpusThroughEveryOperation(t *testing.T) {
	files := corpus(t)
	s := testService()
	stamp := renderPNG(t, pdftest.OnePage("stamp"), 1)
	var mu sync.Mutex
	counts := map[string][2]int{}
	count := func(op string, refused int) {
		mu.Lock()
		defer mu.Unlock()
		c := counts[op]
		c[refused]++
		counts[op] = c
	}
	t.Run("files", func(t *testing.T) {
		for _, path := range files {
			name := filepath.Base(path)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				data := read(t, path)
				for _, op := range Operations {
					count(op, throughOperation(t, s, op, name, data, stamp))
				}
			})
		}
	})
	for _, op := range Operations {
		t.Logf("%-9s %3d results, %3d refusals", op, counts[op][0], counts[op][1])
	}
}

// throughOperation runs op on the corpus file name (data) and checks its
// answer; it returns 1 for a refusal, 0 for a result.
func throughOperation(t *testing.T, s *Service, op, name string, data, stamp []byte) int {
	t.Helper()
	req := Request{Op: op, Files: one(name, data), Every: 2, Angle: 90, UserPassword: "u", Text: "COPY", Page: 1, DPI: 30,
		Set: map[string]string{"title": "Corpus"}}
	switch op {
	case OpMerge:
		req.Files = append(req.Files, File{"b.pdf", pdftest.OnePage("x")})
	case OpAttach:
		req.Files = append(req.Files, File{"a.txt", []byte("x")})
	case OpWatermark:
		if len(name)%2 == 0 { // half the corpus gets an image
			req.Text, req.Files = "", append(req.Files, File{"stamp.png", stamp})
		}
	}
	res, err := s.Do(t.Context(), req)
	if err != nil {
		if _, ok := asClientError(err); !ok {
			t.Errorf("%s through %s: %v (a server fault)", name, op, err)
		}
		return 1
	}
	if res.ContentType == TypePDF {
		if _, err := pdf.Read(res.Data, pdf.DefaultLimits()); err != nil && !bytes.Contains(res.Data[:min(len(res.Data), 2048)], []byte("/Encrypt")) && op != OpEncrypt {
			t.Errorf("%s through %s: the result does not read back: %v", name, op, err)
		}
	}
	return 0
}
