package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdftools"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// These tests drive the built binary, as operators do: environment
// variables in, HTTP and the dev outbox out.

var binary string

// builtVersion is the version the binary of the tests is built with, as
// a release is (-ldflags -X main.version).
const builtVersion = "v9.8.7-test"

func TestMain(m *testing.M) {
	pdftools.RunWorkerIfAsked()
	// The conversion pool of runConvert starts os.Executable() with the
	// argument "convert-worker": in this package's tests that is the test
	// binary, which becomes a worker here.
	if len(os.Args) == 2 && os.Args[1] == "convert-worker" {
		os.Exit(runConvertWorker(nil, os.Stdout, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "quire-bin-")
	if err != nil {
		panic(err)
	}
	flag.Parse()
	setParallel()
	binary = filepath.Join(dir, "quire")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version="+builtVersion, "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build quire: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waiting is how many tests run at once unless -parallel says otherwise:
// most of these tests wait for the servers they start (a lease to expire,
// a slow document, a shutdown), not for this machine's processors. Those
// that load it (200,000-page PDFs, tables of millions of cells, starting
// LibreOffice or Chromium, whose start has a time limit) are not
// parallel: they run one at a time, before the others.
const waiting = 4

// setParallel sets -test.parallel to waiting, unless it was given.
func setParallel() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(waiting))
	}
}

// instance is one running `quire serve`.
type instance struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string
	data string
	done chan error
	logs *apitest.Buffer // written by the goroutine that reads the server's stderr
}

// start runs `quire serve` on a free port with env added to the
// environment, and waits until it reports where it listens.
func start(t *testing.T, data string, env ...string) *instance {
	t.Helper()
	cmd := exec.Command(binary, "serve")
	// No LibreOffice workers nor browsers unless a test asks for them (a
	// later value wins).
	cmd.Env = append(os.Environ(), "QUIRE_ADDR=127.0.0.1:0", "QUIRE_DATA_DIR="+data, "QUIRE_CONVERT_WORKERS=-1", "QUIRE_CHROMIUM_WORKERS=-1")
	cmd.Env = append(cmd.Env, env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &instance{t: t, cmd: cmd, data: data, done: make(chan error, 1), logs: &apitest.Buffer{}}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			io.WriteString(in.logs, line+"\n")
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "quire listening" {
				addr <- l.Addr
			}
		}
		in.done <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	select {
	case a := <-addr:
		in.base = "http://" + a
	case err := <-in.done:
		t.Fatalf("quire serve exited at start: %v\n%s", err, in.logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("quire serve did not start\n%s", in.logs)
	}
	return in
}

// waitUntil polls cond until it holds, for up to a minute: tests wait for
// a condition, never for a delay.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline, tick := time.Now().Add(time.Minute), time.Tick(20*time.Millisecond); !cond(); <-tick {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
	}
}

func (in *instance) get(path string, header ...string) (int, []byte) {
	in.t.Helper()
	return in.do("GET", path, nil, header...)
}

func (in *instance) do(method, path string, body io.Reader, header ...string) (int, []byte) {
	in.t.Helper()
	req, _ := http.NewRequest(method, in.base+path, body)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// outboxCode reads the newest code sent to addr from the dev outbox.
func outboxCode(t *testing.T, data, addr string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for tick := time.Tick(100 * time.Millisecond); time.Now().Before(deadline); <-tick {
		files, _ := filepath.Glob(filepath.Join(data, "outbox", "*.eml"))
		for i := len(files) - 1; i >= 0; i-- {
			f, err := os.Open(files[i])
			if err != nil {
				continue
			}
			m, err := mail.ReadMessage(f)
			if err == nil && strings.Contains(m.Header.Get("To"), addr) {
				body, _ := io.ReadAll(m.Body)
				f.Close()
				if code := regexp.MustCompile(`\b\d{6}\b`).FindString(string(body)); code != "" {
					return code
				}
			}
			f.Close()
		}
	}
	t.Fatalf("no code for %s in %s/outbox", addr, data)
	return ""
}

// issueKey registers on a, verifies on b with the code from a's outbox.
func issueKey(t *testing.T, a, b *instance, addr string) string {
	t.Helper()
	if st, body := a.get("/v1/auth/register?email=" + url.QueryEscape(addr)); st != 200 {
		t.Fatalf("register: %d %s", st, body)
	}
	code := outboxCode(t, a.data, addr)
	st, body := b.get("/v1/auth/verify?email=" + url.QueryEscape(addr) + "&code=" + code)
	var key string
	if st != 200 || json.Unmarshal(body, &key) != nil {
		t.Fatalf("verify: %d %s", st, body)
	}
	return key
}

// authorized reports whether key gets past authentication: the signing
// area answers 401 without a valid key.
func authorized(in *instance, key string) bool {
	st, _ := in.do("POST", "/v1/sign", strings.NewReader("{}"), "Authorization", "Bearer "+key)
	return st != 401
}

func runCLI(t *testing.T, data string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append(os.Environ(), "QUIRE_DATA_DIR="+data), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestServeOnDefaultsWithOutboxAndKeysCLI(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data)
	key := issueKey(t, in, in, "ops@example.com")
	if !authorized(in, key) {
		t.Fatal("the issued key is refused")
	}
	for path, want := range map[string]int{"/verify": 200, "/docs": 200, "/admin": 404} { // the pages; no admin token here
		if st, _ := in.do("GET", path, nil); st != want {
			t.Errorf("GET %s: %d, want %d", path, st, want)
		}
	}
	if !strings.Contains(in.logs.String(), "mail written to dev outbox") {
		t.Error("no log line says where the mail went")
	}
	if fi, err := os.Stat(filepath.Join(data, "secret")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file: %v %v", fi, err)
	}

	out, err := runCLI(t, data, nil, "keys", "list")
	if err != nil || !strings.Contains(out, "ops@example.com") || !strings.Contains(out, key[:11]) || strings.Contains(out, key[11:20]) {
		t.Fatalf("keys list (%v):\n%s", err, out)
	}
	id := regexp.MustCompile(`key_[0-9a-f]+`).FindString(out)
	if out, err := runCLI(t, data, nil, "keys", "revoke", id); err != nil {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if authorized(in, key) {
		t.Error("a revoked key still works")
	}
	out, err = runCLI(t, data, nil, "keys", "create", "--email", "cli@example.com")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || !authorized(in, lines[len(lines)-1]) {
		t.Errorf("keys create (%v): %s", err, out)
	}
	if _, err := runCLI(t, data, nil, "keys", "create", "--email", "not an address"); err == nil {
		t.Error("keys create accepted a bad address")
	}
	if strings.Contains(in.logs.String(), key[3:20]) {
		t.Error("the server log holds the key")
	}
}

func TestTwoInstancesShareOnePostgres(t *testing.T) {
	t.Parallel()
	db := storetest.URL(t, "postgres")
	env := []string{"QUIRE_DATABASE_URL=" + db, "QUIRE_SECRET=" + strings.Repeat("ab", 32)}
	a := start(t, t.TempDir(), env...)
	b := start(t, t.TempDir(), env...)
	key := issueKey(t, a, b, "multi@example.com") // code sent by a, verified on b
	if !authorized(a, key) || !authorized(b, key) {
		t.Fatal("a key issued by b does not work on both instances")
	}
	key = issueKey(t, b, a, "other@example.com")
	if !authorized(a, key) || !authorized(b, key) {
		t.Fatal("a key issued by a does not work on both instances")
	}

	// Each instance generated its own signing identity; a document signed
	// on one verifies as the service's on the other.
	req := `{"document":{"base64":"` + base64.StdEncoding.EncodeToString(pdftest.OnePage("two instances")) +
		`"},"signer":{"email":"s@example.com","name":"Sam"},"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}],"eventId":"evt-ab"}`
	st, body := a.do("POST", "/v1/sign", strings.NewReader(req), "Authorization", "Bearer "+key, "Content-Type", "application/json")
	var signed struct{ Document struct{ Base64 string } }
	if st != 200 || json.Unmarshal(body, &signed) != nil {
		t.Fatalf("sign on a: %d %.200s", st, body)
	}
	st, body = b.do("POST", "/v1/verify", strings.NewReader(`{"document":{"base64":"`+signed.Document.Base64+`"}}`))
	if st != 200 || !strings.Contains(string(body), `"valid":true`) || !strings.Contains(string(body), `"eventId":"evt-ab"`) {
		t.Errorf("verify on b of a document signed on a: %d %s", st, body)
	}

	// An instance with another secret would issue codes the others cannot
	// check: it refuses to start, saying why.
	cmd := exec.Command(binary, "serve")
	cmd.Env = append(os.Environ(), "QUIRE_ADDR=127.0.0.1:0", "QUIRE_DATA_DIR="+t.TempDir(), "QUIRE_DATABASE_URL="+db)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another server secret") {
		t.Errorf("an instance with another secret started (%v): %s", err, out)
	}
}

// TestSIGTERMFinishesRequestsInFlight holds a register request in flight
// with a mail relay that takes its time to greet, sends SIGTERM meanwhile,
// and expects that request answered and then an exit status of 0.
func TestSIGTERMFinishesRequestsInFlight(t *testing.T) {
	t.Parallel()
	relay, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	greeting := make(chan struct{}, 1) // the server reached the relay: its request is in flight
	go func() {
		for {
			c, err := relay.Accept()
			if err != nil {
				return
			}
			select {
			case greeting <- struct{}{}:
			default:
			}
			time.Sleep(1500 * time.Millisecond) // a relay slow to greet: the behaviour under test
			io.WriteString(c, "421 closing\r\n")
			c.Close()
		}
	}()
	in := start(t, t.TempDir(), "QUIRE_SMTP_URL=smtp://"+relay.Addr().String()+"?starttls=none")
	answered := make(chan int, 1)
	go func() {
		res, err := http.Get(in.base + "/v1/auth/register?email=slow@example.com")
		if err != nil {
			answered <- -1
			return
		}
		res.Body.Close()
		answered <- res.StatusCode
	}()
	select {
	case <-greeting:
	case <-time.After(time.Minute):
		t.Fatal("the server did not reach the mail relay within a minute")
	}
	in.cmd.Process.Signal(syscall.SIGTERM)
	if st := <-answered; st != 503 { // answered (the relay refused the mail), not cut off
		t.Errorf("the request in flight got %d, want its answer 503", st)
	}
	select {
	case err := <-in.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, in.logs)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit within 20 s of SIGTERM")
	}
	if !strings.Contains(in.logs.String(), `"msg":"stopped"`) {
		t.Errorf("no orderly stop in the log:\n%s", in.logs)
	}
}

func TestBadConfigurationIsRefused(t *testing.T) {
	t.Parallel()
	for _, env := range []string{"QUIRE_RATE_VERIFY_IP=lots", "QUIRE_KEY_PREFIX=SD", "QUIRE_SMTP_URL=ftp://x", "QUIRE_DATABASE_URL=mysql://u:pw@h/d", "QUIRE_PUBLIC_URL=docs.example.com"} {
		out, err := runCLI(t, t.TempDir(), []string{env, "QUIRE_ADDR=127.0.0.1:0"}, "serve")
		name := strings.SplitN(env, "=", 2)[0]
		if err == nil || !strings.Contains(out, name) {
			t.Errorf("%s: exit %v, output does not name the variable:\n%s", env, err, out)
		}
	}
}
