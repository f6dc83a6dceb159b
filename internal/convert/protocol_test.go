package convert

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"time"
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
