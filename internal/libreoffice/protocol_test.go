package libreoffice

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestFrameRoundTrip(t *testing.T) {
	var b bytes.Buffer
	in := &message{Kind: kindResult, ID: 7, Engine: 42 * time.Millisecond, Body: []byte("%PDF-1.7 body")}
	if err := writeFrame(&b, in); err != nil {
		t.Fatal(err)
	}
	out, err := readFrame(&b)
	if err != nil {
		t.Fatal(err)
	}
	if out.Kind != in.Kind || out.ID != in.ID || out.Engine != in.Engine || !bytes.Equal(out.Body, in.Body) {
		t.Errorf("got %+v, want %+v", out, in)
	}
	if _, err := readFrame(&b); err != io.EOF {
		t.Errorf("read past the last frame: %v, want io.EOF", err)
	}
}

func TestFrameLimits(t *testing.T) {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(maxHeader+1))
	if _, err := readFrame(&b); err == nil {
		t.Error("oversized header accepted")
	}
	b.Reset()
	writeFrame(&b, &message{Kind: kindJob, Body: []byte("abc")})
	truncated := b.Bytes()[:b.Len()-1]
	if _, err := readFrame(bytes.NewReader(truncated)); err != io.ErrUnexpectedEOF {
		t.Errorf("truncated frame: %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestAsyncPreemptOff(t *testing.T) {
	for in, want := range map[string]bool{"": false, "asyncpreemptoff=1": true, "x=1,asyncpreemptoff=1": true,
		"asyncpreemptoff=1,asyncpreemptoff=0": false, "asyncpreemptoff=0": false} {
		if got := asyncPreemptOff(in); got != want {
			t.Errorf("asyncPreemptOff(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestWidenedPipeKeepsDeadlines: the pipes to and from a worker hold a
// whole typical frame, and their deadlines, which bound every job, still
// work.
func TestWidenedPipeKeepsDeadlines(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	widen(w)
	c, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	c.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) })
	if err != nil || size < pipeSize {
		t.Errorf("pipe size %d, %v; want %d", size, err, pipeSize)
	}
	w.SetWriteDeadline(time.Now().Add(30 * time.Second))      // a pipe left narrow fails here instead of hanging
	if _, err := w.Write(make([]byte, 512<<10)); err != nil { // more than Linux's default, with no reader
		t.Fatalf("a 512 KiB frame: %v", err)
	}
	if err := r.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatalf("deadline: %v", err)
	}
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
}
