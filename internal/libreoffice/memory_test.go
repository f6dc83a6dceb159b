package libreoffice

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// checkMemoryError fails the test unless err is ErrMemoryLimit for limit,
// answered 422, with a job's growth over the limit. How far over depends on when
// the watchdog's samples land, a matter of time: that the kill comes at
// the first sample over the limit is engine's TestWatchJobMemory*.
func checkMemoryError(t *testing.T, what string, err error, limit int64) {
	t.Helper()
	var me *memoryError
	if !errors.As(err, &me) || !errors.Is(err, engine.ErrMemoryLimit) {
		t.Fatalf("%s: %v, want ErrMemoryLimit", what, err)
	}
	want := fmt.Sprintf("needs more memory than the limit of %d MiB", limit>>20)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: message %q does not say %q", what, err, want)
	}
	if code := apiCode(err); code != quire.CodeUnprocessable {
		t.Errorf("%s: answered %s, want %s", what, code, quire.CodeUnprocessable)
	}
	if me.peak <= limit {
		t.Errorf("%s: the worker peaked at %d MiB, want over the limit of %d MiB", what, me.peak>>20, limit>>20)
	}
	t.Logf("%s: %v", what, err)
}

func apiCode(err error) string {
	var e *quire.Error
	if errors.As(engine.ToAPIError(err, 0), &e) {
		return e.Code
	}
	return ""
}

// TestJobOverMemoryLimitIsKilled runs a job that keeps allocating: the
// supervisor kills its worker at the limit, answers 422 without a retry,
// and the next worker serves. The cold soffice's children are watched too.
func TestJobOverMemoryLimitIsKilled(t *testing.T) {
	const limit = 256 << 20
	programDir := fakeProgramDir(t, `"`+os.Args[0]+`" quire-test-worker grow; sleep 60`)
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1, MaxWorkerMemory: limit}, ProgramDir: programDir})
	_, err := p.Convert(context.Background(), []byte("grow 600"), "md")
	checkMemoryError(t, "warm worker", err, limit)
	if c := p.Counters(); c.OverMemory != 1 || c.Crashes != 0 || c.Retried != 0 {
		t.Errorf("counters %+v: want one job over its memory, no crash, no retry", c)
	}
	if _, err := p.Convert(context.Background(), []byte("fine"), "md"); err != nil {
		t.Fatalf("the next job: %v", err)
	}
	_, err = p.Convert(context.Background(), []byte("unloadable"), "md")
	checkMemoryError(t, "cold soffice", err, limit)
}

// TestMemoryLimitIsPerJob: the limit bounds what a job grows its worker
// by, not what the worker holds, so that a job that succeeds alone does
// not fail because of the jobs before it: each "keep" job leaves most of
// the limit behind in the worker, which ends up holding more than the
// limit, and the next jobs still succeed; a job past the limit still fails.
func TestMemoryLimitIsPerJob(t *testing.T) {
	const limit = 256 << 20
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1, MaxWorkerMemory: limit, MaxWorkerRSS: -1}})
	for i := range 3 {
		if _, err := p.Convert(context.Background(), []byte("keep 100"), "md"); err != nil {
			t.Fatalf("job %d, within the limit on a worker holding %d MiB: %v", i+1, p.Status().Details[0].RSSBytes>>20, err)
		}
	}
	if held := p.Status().Details[0].RSSBytes; held <= limit {
		t.Fatalf("the worker holds %d MiB, want over the limit of %d MiB for the test to mean anything", held>>20, limit>>20)
	}
	_, err := p.Convert(context.Background(), []byte("grow 600"), "md")
	checkMemoryError(t, "a job past the limit", err, limit)
	if c := p.Counters(); c.OverMemory != 1 || c.Converted != 3 {
		t.Errorf("counters %+v, want 3 converted and 1 over memory", c)
	}
}

// hugeRunDOCX is the DOCX of the issue: one w:t of 1000 MiB of spaces,
// about 1 MB compressed.
var hugeRunDOCX = sync.OnceValue(func() []byte {
	head := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t xml:space="preserve">`
	tail := `</w:t></w:r></w:p></w:body></w:document>`
	return convtest.WithRepeatedPart(convtest.DOCXBody("", ""), "word/document.xml", head, strings.Repeat(" ", 1<<20), 1000, tail)
})

// manyParagraphsDOCX is the other DOCX of the issue: two million
// paragraphs. distinct numbers them, which makes a package that
// compresses about 15 to 1, like real text; otherwise they are all alike,
// and the package compresses a thousandfold.
func manyParagraphsDOCX(distinct bool) []byte {
	const n, alike = 2_000_000, "<w:p><w:r><w:t>x</w:t></w:r></w:p>"
	if !distinct {
		return convtest.WithRepeatedPart(convtest.DOCXBody("", ""), "word/document.xml", convtest.DocumentHead, strings.Repeat(alike, n/50), 50, convtest.DocumentTail)
	}
	b := []byte(convtest.DocumentHead)
	for i := range n {
		b = append(b, "<w:p><w:r><w:t>"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "</w:t></w:r></w:p>"...)
	}
	b = append(b, convtest.DocumentTail...)
	// The fastest level compresses this text as well as the default one
	// does, in half the time (seconds under the race detector).
	var data bytes.Buffer
	w, _ := flate.NewWriter(&data, flate.BestSpeed)
	w.Write(b)
	w.Close()
	return convtest.PackageWith(convtest.DOCXBody("", ""), &zip.FileHeader{Name: "word/document.xml", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(b),
		CompressedSize64: uint64(data.Len()), UncompressedSize64: uint64(len(b))}, data.Bytes())
}

// TestIssueDocumentsAreRefusedBeforeLibreOffice: with the default limits,
// neither document of the issue reaches a worker (the script engine would
// convert anything).
func TestIssueDocumentsAreRefusedBeforeLibreOffice(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	for _, c := range []struct {
		name string
		in   []byte
		want error
		says string
	}{
		{"1000 MiB of spaces", hugeRunDOCX(), engine.ErrMemoryLimit, "expands to more than the 256 MiB allowed"},
		{"two million paragraphs alike", manyParagraphsDOCX(false), engine.ErrUnprocessable, "more than the 200 to 1 allowed"},
	} {
		_, err := p.Convert(context.Background(), c.in, engine.FromDOCX)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) || apiCode(err) != quire.CodeUnprocessable {
			t.Errorf("%s (%d KB): %v, want %v saying %q", c.name, len(c.in)>>10, err, c.want, c.says)
		}
	}
	if c := p.Counters(); c.Converted+c.Failed != 0 {
		t.Errorf("counters %+v: a document reached the worker", c)
	}
}

// TestWorkerMemoryIsBounded gives LibreOffice the documents of the issue
// with the package limits off, so that only the worker's memory limit
// stands between them and gigabytes: each fails with 422 at the limit, and
// the pool converts the next document.
func TestWorkerMemoryIsBounded(t *testing.T) {
	requireLibreOffice(t)
	const limit = 256 << 20 // what the worker grows by during the job
	p := testPool(t, "lok", Options{PoolOptions: engine.PoolOptions{Workers: 1, MaxWorkerMemory: limit}, MaxExpandedBytes: -1, MaxCompressionRatio: -1})
	for name, in := range map[string][]byte{"1000 MiB of spaces": hugeRunDOCX(), "two million paragraphs": manyParagraphsDOCX(true)} {
		r, err := p.ConvertTimed(context.Background(), in, engine.FromDOCX)
		t.Logf("%s: answered in %v", name, r.Total)
		checkMemoryError(t, name, err, limit)
	}
	if _, err := p.Convert(context.Background(), convtest.DOCXBody(convtest.Paragraphs(3, "after"), ""), engine.FromDOCX); err != nil {
		t.Fatalf("the pool does not serve after the limit: %v", err)
	}
}
