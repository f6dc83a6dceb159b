package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	conns    = 64
	duration = 10 * time.Second
)

// startBaseline runs the do-nothing Go handler in a process of its own.
func startBaseline() *process {
	return startProcess(os.Args[0], []string{"baseline-server", "127.0.0.1:0"}, nil)
}

// httpOverhead measures what quire's HTTP stack costs per request (request
// id, logging, metrics, routing, authentication) against a do-nothing Go
// handler.
func httpOverhead() result {
	base := startBaseline()
	defer base.stop()
	q := startQuire()
	defer q.stop()
	key := createKey(q.data)

	get := func(url string, header ...string) request {
		return func(int64) (*http.Request, error) {
			r, err := http.NewRequest("GET", url, nil)
			if err == nil && len(header) == 2 {
				r.Header.Set(header[0], header[1])
			}
			return r, err
		}
	}
	b := base.load(conns, duration, 204, get(base.url+"/"))
	missing := q.load(conns, duration, 404, get(q.url+"/v1/none"))
	authed := q.load(conns, duration, 404, get(q.url+"/v1/sign/none", "Authorization", "Bearer "+key))
	table := tableHead + row("do-nothing Go handler", b, b.rate()) +
		row("quire, unknown path (middleware + error body)", missing, b.rate()) +
		row("quire, authenticated path (+ key look-up in SQLite)", authed, b.rate())
	figs := []figure{
		infoFigure("quire, unknown path: rate over a do-nothing Go handler's", fmt.Sprintf("%.2f (%.0f / %.0f req/s)", missing.rate()/b.rate(), missing.rate(), b.rate())),
		infoFigure("quire, authenticated path: rate over a do-nothing Go handler's", fmt.Sprintf("%.2f (%.0f req/s, p99 %.2f ms)", authed.rate()/b.rate(), authed.rate(), ms(authed.p99))),
	}
	return result{title: "HTTP overhead", table: table, figures: figs, notes: fmt.Sprintf(
		"%d keep-alive connections for %s each, load generator in the same machine. "+
			"The ratio is quire's rate over the do-nothing handler's, measured in the same run.\n", conns, duration)}
}

// baselineServer serves the do-nothing handler at addr, or, given a file,
// the durable do-nothing handler that appends to it (see durableLog).
func baselineServer(addr, file string) {
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // what any handler must do before answering
		w.WriteHeader(http.StatusNoContent)
	})
	if file != "" {
		h = openDurableLog(file)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stderr, "{\"msg\":\"quire listening\",\"addr\":%q}\n", ln.Addr().String())
	http.Serve(ln, h)
}

type process struct {
	cmd       *exec.Cmd
	url, data string
	bin       string // the binary serving, for the operator CLI of its data
}

// startProcess runs a server that logs {"msg":"quire listening","addr":...}
// on standard error and waits for that line.
func startProcess(bin string, args, env []string) *process {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var l struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "quire listening" {
			go func() { // keep draining so the server never blocks on its log
				for sc.Scan() {
				}
			}()
			return &process{cmd: cmd, url: "http://" + l.Addr}
		}
	}
	panic(fmt.Sprintf("%s %v exited before listening", bin, args))
}

func (p *process) stop() {
	p.cmd.Process.Signal(os.Interrupt)
	p.cmd.Wait()
	if p.data != "" {
		os.RemoveAll(p.data)
	}
}

func startQuire(env ...string) *process { return startQuireBin(quireBinary(), env...) }

// startQuireBin is startQuire with another build of quire (baselineBinary).
func startQuireBin(bin string, env ...string) *process {
	data, err := os.MkdirTemp("", "quire-bench-")
	if err != nil {
		panic(err)
	}
	// No browsers unless a benchmark asks for them (a later value wins).
	env = append([]string{"QUIRE_ADDR=127.0.0.1:0", "QUIRE_DATA_DIR=" + data, "QUIRE_CHROMIUM_WORKERS=-1"}, env...)
	p := startProcess(bin, []string{"serve"}, env)
	p.data, p.bin = data, bin
	return p
}

func quireBinary() string {
	bin, _ := filepath.Abs("bin/quire")
	if _, err := os.Stat(bin); err != nil {
		panic("bench: bin/quire not found: run make bench (it builds it first)")
	}
	return bin
}

// createKey issues a key with the operator CLI, the way an operator would,
// with the settings env beside the data directory.
func createKey(data string, env ...string) string {
	return operator(append([]string{"QUIRE_DATA_DIR=" + data}, env...), "keys", "create", "--email", "bench@example.com")
}

// createKeyFor is createKey for the owner email.
func createKeyFor(data, email string) string {
	return operator([]string{"QUIRE_DATA_DIR=" + data}, "keys", "create", "--email", email)
}

// keyOf issues a key for email on server p with its own binary's CLI.
func (p *process) keyOf(email string, env ...string) string {
	return operatorBin(p.bin, append([]string{"QUIRE_DATA_DIR=" + p.data}, env...), "keys", "create", "--email", email)
}

// operator runs the quire CLI with env added (the server's data directory
// and secret) and returns the last line it printed (the key it created).
func operator(env []string, args ...string) string { return operatorBin(quireBinary(), env, args...) }

func operatorBin(bin string, env []string, args ...string) string {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		panic(fmt.Sprintf("quire %s: %v\n%s", strings.Join(args[:2], " "), err, stderr))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
