package libreoffice

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
)

// TestMeasureCorpus prints the figures of the engine over the corpus:
// warm per-document times with one worker (engine time measured inside
// the worker, and the whole call), throughput with one and two jobs at a
// time on two workers, and cold soffice per document. It takes minutes,
// so it runs only with QUIRE_CONVERT_MEASURE=1.
func TestMeasureCorpus(t *testing.T) {
	if os.Getenv("QUIRE_CONVERT_MEASURE") != "1" {
		t.Skip("set QUIRE_CONVERT_MEASURE=1 to measure the engine over the corpus")
	}
	files := corpusFiles(t)
	requireLibreOffice(t)
	docs := make([][]byte, len(files))
	for i, f := range files {
		docs[i], _ = os.ReadFile(f)
	}

	one := testPool(t, "lok", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	var engineTimes, total []time.Duration
	var warmDocs [][]byte // the documents LibreOfficeKit loads (no cold fallback)
	for round := range 3 {
		for _, d := range docs {
			r, err := one.ConvertTimed(context.Background(), d, "docx")
			if err != nil {
				t.Fatal(err)
			}
			if r.Cold {
				continue
			}
			engineTimes, total = append(engineTimes, r.Engine), append(total, r.Total)
			if round == 0 {
				warmDocs = append(warmDocs, d)
			}
		}
	}
	t.Logf("warm, 1 worker, %d documents x 3 (%d cold fallbacks left out): engine median %v p95 %v; whole call median %v p95 %v",
		len(warmDocs), len(docs)-len(warmDocs), pct(engineTimes, 50), pct(engineTimes, 95), pct(total, 50), pct(total, 95))

	two := testPool(t, "lok", Options{PoolOptions: engine.PoolOptions{Workers: 2}})
	for _, n := range []int{1, 2} {
		t.Logf("throughput, 2 workers, %d job(s) at a time: %.1f documents/s over the whole corpus, %.1f over the %d warm documents",
			n, throughput(t, two, docs, n), throughput(t, two, warmDocs, n), len(warmDocs))
	}

	// soffice works on copies: it leaves lock files beside the documents
	// it opens, and the corpus is shared.
	var soffice []time.Duration
	profile := fileURL(filepath.Join(t.TempDir(), "profile"))
	in, out := t.TempDir(), t.TempDir()
	for i, d := range docs {
		f := filepath.Join(in, filepath.Base(files[i]))
		if err := os.WriteFile(f, d, 0o600); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		cmd := exec.Command("soffice", "--headless", "-env:UserInstallation="+profile, "--convert-to", "pdf", "--outdir", out, f)
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		if i > 0 { // the first run also creates the profile
			soffice = append(soffice, time.Since(t0))
		}
	}
	t.Logf("cold soffice, %d documents: median %v p95 %v", len(soffice), pct(soffice, 50), pct(soffice, 95))
}

// throughput converts docs with n jobs at a time and returns documents per second.
func throughput(t *testing.T, p *Pool, docs [][]byte, n int) float64 {
	work := make(chan []byte)
	var wg sync.WaitGroup
	t0 := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				if _, err := p.Convert(context.Background(), d, "docx"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for _, d := range docs {
		work <- d
	}
	close(work)
	wg.Wait()
	return float64(len(docs)) / time.Since(t0).Seconds()
}

// pct returns the p-th percentile of ds (nearest rank).
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, (len(s)*p+99)/100-1)].Round(100 * time.Microsecond)
}
