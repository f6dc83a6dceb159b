package client_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire/client"
)

// The conversion route of the real server is not built yet, so these
// tests use a server of their own that checks what the client sends and
// answers as the contract says (the real route is exercised for its
// authentication in TestKeyIssuanceAndAuthentication).

// countingReader yields size pseudo-random bytes and counts how many were
// read, so a test can see how far ahead of the server the client reads.
// It has no WriteTo method, so nothing can take it in one go.
type countingReader struct {
	rng  *rand.ChaCha8
	left int64
	read atomic.Int64
	sum  hashWriter
}

type hashWriter interface {
	io.Writer
	Sum([]byte) []byte
}

func newCountingReader(size int64) *countingReader {
	return &countingReader{rng: rand.NewChaCha8([32]byte{1, 2, 3}), left: size, sum: sha256.New()}
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	r.rng.Read(p)
	r.sum.Write(p)
	r.left -= int64(len(p))
	r.read.Add(int64(len(p)))
	return len(p), nil
}

// received is what the test server got in the part "file".
type received struct {
	from, auth, filename, contentType string
	size                              int64
	sum                               []byte
	readBeforeServer                  int64 // bytes the client had read when the server began to read
}

// uploadServer checks a streamed upload: before reading the body it waits
// until the client stops reading ahead (its buffers and the connection's
// are full), records how much the client had read by then, and then reads
// and hashes the whole part "file".
//
// The server's socket gets a small receive buffer (and the client's a small
// send buffer, see smallBufferClient) so that what the kernel holds in
// flight, megabytes on loopback by default, does not hide what the client
// itself holds.
func uploadServer(t *testing.T, src *countingReader, got *received, answer []byte) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.readBeforeServer = waitUntilStalled(&src.read)
		got.from, got.auth = r.URL.Query().Get("from"), r.Header.Get("Authorization")
		mr, err := r.MultipartReader()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		part, err := mr.NextPart()
		if err != nil || part.FormName() != "file" {
			http.Error(w, fmt.Sprintf("first part: %v", err), http.StatusBadRequest)
			return
		}
		got.filename, got.contentType = part.FileName(), part.Header.Get("Content-Type")
		h := sha256.New()
		if got.size, err = io.Copy(h, part); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got.sum = h.Sum(nil)
		if _, err := mr.NextPart(); err != io.EOF {
			http.Error(w, "more than one part", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(answer)
	}))
	srv.Listener = smallBufferListener{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

const socketBuffer = 64 << 10

type smallBufferListener struct{ net.Listener }

func (l smallBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetReadBuffer(socketBuffer)
	}
	return c, err
}

// smallBufferClient is an HTTP client whose connections have a small send
// buffer.
func smallBufferClient(t *testing.T) *http.Client {
	d := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetWriteBuffer(socketBuffer)
		}
		return c, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// waitUntilStalled returns the counter's value once it has not moved for
// 200 ms (or after 10 s). A stall is the behaviour under test (the client
// stops sending when the server does not read): no event marks one, so it
// is read as a counter that no longer moves.
func waitUntilStalled(n *atomic.Int64) int64 {
	last, still := n.Load(), 0
	for deadline := time.Now().Add(10 * time.Second); still < 10 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // the stall observed: see above
		if v := n.Load(); v != last {
			last, still = v, 0
		} else {
			still++
		}
	}
	return last
}

func TestConvertStreamsTheUpload(t *testing.T) {
	const size = 10 << 20
	src := newCountingReader(size)
	pdf := []byte("%PDF-1.7\n...\n%%EOF\n")
	var got received
	srv := uploadServer(t, src, &got, pdf)

	c := client.New(srv.URL, client.WithAPIKey("sd_test-key"), client.WithHTTPClient(smallBufferClient(t)))
	out, err := c.Convert(ctxFor(t), src, `C:\Users\ann\Report Q3.docx`, "docx")
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if !bytes.Equal(out, pdf) {
		t.Errorf("Convert returned %q, want the server's PDF", out)
	}
	if got.size != size || !bytes.Equal(got.sum, src.sum.Sum(nil)) {
		t.Errorf("the server received %d bytes (sha256 %x), want %d (sha256 %x)", got.size, got.sum, size, src.sum.Sum(nil))
	}
	t.Logf("the client had read %d of %d bytes when the server began to read", got.readBeforeServer, size)
	if got.readBeforeServer >= 1<<20 {
		t.Errorf("the client read %d of %d bytes before the server read any: the upload is buffered, not streamed",
			got.readBeforeServer, size)
	}
	if got.from != "docx" || got.auth != "Bearer sd_test-key" {
		t.Errorf("from=%q, Authorization %q", got.from, got.auth)
	}
	if got.filename != "Report Q3.docx" || !strings.Contains(got.contentType, "wordprocessingml") {
		t.Errorf("part filename %q, content type %q", got.filename, got.contentType)
	}
}

// failingReader fails after some bytes, as a file on a broken disk would.
type failingReader struct{ left int }

var errDisk = errors.New("disk on fire")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, errDisk
	}
	n := min(len(p), f.left)
	clear(p[:n])
	f.left -= n
	return n, nil
}

func TestConvertReportsReadErrorsOfTheFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("%PDF-"))
	}))
	t.Cleanup(srv.Close)
	_, err := client.New(srv.URL).Convert(ctxFor(t), &failingReader{left: 100 << 10}, "a.docx", "docx")
	if !errors.Is(err, errDisk) || !strings.Contains(err.Error(), "POST /v1/convert") || !strings.Contains(err.Error(), "a.docx") {
		t.Fatalf("error %v, want the read error, naming the call and the file", err)
	}
}

func TestConvertLimitsTheAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write(bytes.Repeat([]byte("x"), 1000))
	}))
	t.Cleanup(srv.Close)
	_, err := client.New(srv.URL, client.WithMaxResponseBytes(999)).Convert(ctxFor(t), strings.NewReader("x"), "a.docx", "docx")
	if !errors.Is(err, client.ErrResponseTooLarge) {
		t.Fatalf("error %v, want ErrResponseTooLarge", err)
	}
	out, err := client.New(srv.URL, client.WithMaxResponseBytes(1000)).Convert(ctxFor(t), strings.NewReader("x"), "a.docx", "docx")
	if err != nil || len(out) != 1000 {
		t.Fatalf("an answer of exactly the limit: %d bytes, %v", len(out), err)
	}
}
