package libreoffice

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// The supervisor and a worker exchange frames over the worker's stdin
// (supervisor to worker) and stdout (worker to supervisor):
//
//	uint32 big-endian length | JSON header | uint32 big-endian length | body
//
// The header is a message; the body carries the bytes of a document
// (the input of a job, the PDF or DOCX of a result) and is empty otherwise.
// The conversation is strictly one request, one answer:
//
//	supervisor: init{ProgramDir, ProfileDir, TempDir, CPU, Confine}
//	worker:     ready{Version, Engine: warm-up time, Warning} or ready{Error}
//	supervisor: job{ID, From, To, Filter, Password} + input bytes
//	worker:     result{ID, Engine: conversion time, Pages} + output bytes, or result{ID, Error, Class, Detail}
//	            (then it closes the document and reads the next job)
//	...
//
// A worker that reads end-of-file on stdin exits.

// Message kinds.
const (
	kindInit   = "init"
	kindReady  = "ready"
	kindJob    = "job"
	kindResult = "result"
)

// Error classes of a result, decided in the worker.
const (
	classLoad     = "load"     // LibreOfficeKit could not load the document: try soffice (cold.go)
	classDocument = "document" // LibreOffice could not export the document: ErrUnprocessable
	classEngine   = "engine"   // the worker failed around LibreOffice: an internal error
)

// Frame size limits: a header is small; a body holds at most a document
// or its PDF.
const (
	maxHeader = 1 << 16
	maxBody   = 1 << 30
)

// message is the header of a frame. Body travels after it, not in the JSON.
type message struct {
	Kind string `json:"kind"`
	ID   uint64 `json:"id,omitempty"`

	// init
	ProgramDir string `json:"programDir,omitempty"`
	ProfileDir string `json:"profileDir,omitempty"`
	TempDir    string `json:"tempDir,omitempty"`
	CPU        *int   `json:"cpu,omitempty"`     // the CPU the worker's LibreOffice runs on; nil: any (affinity.go)
	Confine    bool   `json:"confine,omitempty"` // confine the worker's filesystem (engine.ConfineFilesystem)

	// job
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`       // the output format; empty: ToPDF
	Filter   string `json:"filter,omitempty"`   // the export filter's options (filterOptions)
	Password string `json:"password,omitempty"` // opens an encrypted document

	// ready, result
	Version string        `json:"version,omitempty"`
	Engine  time.Duration `json:"engineNs,omitempty"` // time LibreOffice took to load and export (or to start and warm up), measured in the worker
	Error   string        `json:"error,omitempty"`
	Warning string        `json:"warning,omitempty"` // ready: the worker could not confine itself, and runs all the same
	Class   string        `json:"class,omitempty"`
	Detail  string        `json:"detail,omitempty"` // result: the engine's own words on the failure, for the log only (they may name the worker's files)
	Pages   int64         `json:"pages,omitempty"`  // result: the pages of a PDF output, counted in the worker (outputPages)

	Body []byte `json:"-"`
}

// writeFrame writes m and its body as one frame.
func writeFrame(w io.Writer, m *message) error {
	header, err := json.Marshal(m)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, 8+len(header))
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(header)))
	buf = append(buf, header...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(m.Body)))
	if _, err := w.Write(buf); err != nil {
		return err
	}
	_, err = w.Write(m.Body)
	return err
}

// readFrame reads one frame. io.EOF means the other side closed the
// stream cleanly between frames.
func readFrame(r io.Reader) (*message, error) {
	header, err := readChunk(r, maxHeader)
	if err != nil {
		return nil, err
	}
	m := new(message)
	if err := json.Unmarshal(header, m); err != nil {
		return nil, fmt.Errorf("bad frame header: %w", err)
	}
	if m.Body, err = readChunk(r, maxBody); err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return m, err
}

// readChunk reads a length-prefixed chunk of at most limit bytes.
func readChunk(r io.Reader, limit uint32) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > limit {
		return nil, fmt.Errorf("frame chunk of %d bytes exceeds the limit of %d", size, limit)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}
