package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
)

// startDurableBaseline runs the durable do-nothing handler (see
// durableLog) in a process of its own, its file in a fresh directory.
func startDurableBaseline() *process {
	dir, err := os.MkdirTemp("", "quire-bench-durable-")
	if err != nil {
		panic(err)
	}
	p := startProcess(os.Args[0], []string{"baseline-server", "127.0.0.1:0", filepath.Join(dir, "events.log")}, nil)
	p.data = dir
	return p
}

// durableLog is the least that a handler which answers only once the
// request is on disk can do: it appends each body to one file and answers
// after an fdatasync that covers it, one write and one fdatasync shared by
// every request that arrived while the previous ones ran (group commit,
// as quire's intake). No parsing, no index, no count: its rate is what
// is left of the do-nothing handler's once each answer waits for the
// disk, on this machine, for quire's rate to be read against.
type durableLog struct {
	f     *os.File
	queue chan *appended
}

type appended struct {
	body []byte
	done chan struct{}
}

func openDurableLog(path string) *durableLog {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		panic(err)
	}
	l := &durableLog{f: f, queue: make(chan *appended, 4*conns)}
	go l.write()
	return l
}

func (l *durableLog) write() {
	var batch []*appended
	var buf []byte
	for first := range l.queue {
		batch, buf = append(batch[:0], first), buf[:0]
		for len(l.queue) > 0 {
			batch = append(batch, <-l.queue)
		}
		for _, a := range batch {
			buf = append(append(buf, a.body...), '\n')
		}
		if _, err := l.f.Write(buf); err != nil {
			panic(err)
		}
		if err := syscall.Fdatasync(int(l.f.Fd())); err != nil {
			panic(err)
		}
		for _, a := range batch {
			close(a.done)
		}
	}
}

func (l *durableLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a := &appended{body: body, done: make(chan struct{})}
	l.queue <- a
	<-a.done
	w.WriteHeader(http.StatusNoContent)
}
