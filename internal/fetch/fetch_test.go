package fetch

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAllowPrivate(t *testing.T) {
	t.Parallel()
	srv := newServer(t, body("%PDF-1.7"))
	dev, _ := newFetcher(Options{AllowPrivate: true}, nil)
	got, err := dev.Get(context.Background(), srv.URL+"/doc.pdf")
	if err != nil || string(got) != "%PDF-1.7" {
		t.Fatalf("AllowPrivate: got %q, %v", got, err)
	}

	other := newServer(t, body("%PDF-1.7"))
	prod, log := newFetcher(Options{}, nil)
	_, err = prod.Get(context.Background(), other.URL+"/doc.pdf")
	wantErr(t, err, ErrForbiddenAddress)
	other.assertUntouched(t)
	if d := log.dialed(); len(d) != 0 {
		t.Errorf("dialed %v", d)
	}
}

func TestHTTPS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(body("%PDF-1.7"))
	t.Cleanup(srv.Close)
	f, _ := newFetcher(Options{AllowPrivate: true}, nil)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	f.client.Transport.(*http.Transport).TLSClientConfig.RootCAs = roots
	if got, err := f.Get(context.Background(), srv.URL); err != nil || string(got) != "%PDF-1.7" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestForbiddenTargets(t *testing.T) {
	t.Parallel()
	srv := newServer(t, body("secret"))
	port := strconv.Itoa(int(srv.addr.Port()))
	answers := []string{
		"127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.0.1", "192.168.1.1",
		"169.254.169.254", "100.64.0.1", "198.18.0.1", "0.0.0.0", "224.0.0.1",
		"255.255.255.255", "192.0.2.1",
		"::1", "::", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "fd00::1", "fd00:ec2::254",
		"fe80::1", "ff02::1", "64:ff9b::a00:1", "64:ff9b::7f00:1", "2002:a9fe:a9fe::",
	}
	zone := map[string][]netip.Addr{}
	var urls []string
	for i, a := range answers {
		name := fmt.Sprintf("h%d.evil.test", i)
		zone[name] = []netip.Addr{netip.MustParseAddr(a)}
		urls = append(urls, "http://"+name+":"+port+"/")
	}
	// Public and private together: the whole name is refused.
	zone["mixed.evil.test"] = []netip.Addr{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("10.0.0.1")}
	urls = append(urls, "http://mixed.evil.test:"+port+"/")
	// Addresses written in the URL itself.
	for _, host := range []string{"127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "0.0.0.0", "[::]", "localhost", "169.254.169.254"} {
		urls = append(urls, "http://"+host+":"+port+"/")
	}
	urls = append(urls, "http://169.254.169.254/latest/meta-data/", "https://[fd00:ec2::254]/")

	f, log := newFetcher(Options{Resolver: testResolver(t, zone)}, nil)
	for _, u := range urls {
		_, err := f.Get(context.Background(), u)
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s: error %v, want ErrForbiddenAddress", u, err)
		}
	}
	if d := log.dialed(); len(d) != 0 {
		t.Errorf("connections attempted to %v", d)
	}
	srv.assertUntouched(t)
}

// Names resolving to public addresses are connected to, at the vetted
// address; a loopback server stands in for the public one.
func TestPublicTargets(t *testing.T) {
	t.Parallel()
	srv := newServer(t, body("ok"))
	port := strconv.Itoa(int(srv.addr.Port()))
	zone := map[string][]netip.Addr{
		"v4.example.test":     {netip.MustParseAddr("8.8.8.8")},
		"v6.example.test":     {netip.MustParseAddr("2001:4860::8888")},
		"mapped.example.test": {netip.MustParseAddr("::ffff:8.8.4.4")},
	}
	standIn := map[string]string{}
	for _, as := range zone {
		standIn[netip.AddrPortFrom(as[0].Unmap(), srv.addr.Port()).String()] = srv.addr.String()
	}
	f, log := newFetcher(Options{Resolver: testResolver(t, zone)}, standIn)
	f.client.Transport.(*http.Transport).DisableKeepAlives = true // one dial per download
	for name := range zone {
		if got, err := f.Get(context.Background(), "http://"+name+":"+port+"/"); err != nil || string(got) != "ok" {
			t.Errorf("%s: got %q, %v", name, got, err)
		}
	}
	want := []string{"8.8.8.8:" + port, "[2001:4860::8888]:" + port, "8.8.4.4:" + port}
	for _, w := range want {
		if !strings.Contains(strings.Join(log.dialed(), " "), w) {
			t.Errorf("dialed %v, want %s among them", log.dialed(), w)
		}
	}
}

func TestRedirects(t *testing.T) {
	t.Parallel()
	forbidden := newServer(t, body("internal"))
	mux := http.NewServeMux()
	origin := newServer(t, mux)
	redirect := func(path, to string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) })
	}
	redirect("/to-loopback", forbidden.URL+"/")
	redirect("/to-private-name", fmt.Sprintf("http://private.evil.test:%d/", origin.addr.Port()))
	redirect("/to-file", "file:///etc/passwd")
	redirect("/to-ftp", "ftp://ftp.example.test/doc.pdf")
	redirect("/to-credentials", fmt.Sprintf("http://user:hunter2@%s/hop/0", origin.addr))
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			fmt.Fprint(w, "arrived")
			return
		}
		http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusFound)
	})

	zone := map[string][]netip.Addr{"private.evil.test": {netip.MustParseAddr("10.0.0.1")}}
	f, log := newFetcher(Options{Resolver: testResolver(t, zone)}, nil)
	onlyPublic(f, origin.addr)
	get := func(path string) ([]byte, error) { return f.Get(context.Background(), origin.URL+path) }

	if got, err := get("/hop/5"); err != nil || string(got) != "arrived" {
		t.Fatalf("5 redirects: got %q, %v", got, err)
	}
	_, err := get("/hop/6")
	wantErr(t, err, ErrTooManyRedirects)
	_, err = get("/to-loopback")
	wantErr(t, err, ErrForbiddenAddress)
	forbidden.assertUntouched(t)
	_, err = get("/to-private-name")
	wantErr(t, err, ErrForbiddenAddress)
	for _, path := range []string{"/to-file", "/to-ftp", "/to-credentials"} {
		_, err = get(path)
		wantErr(t, err, ErrBadRedirect)
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error text leaks the password: %v", err)
		}
	}
	for _, d := range log.dialed() {
		if d != origin.addr.String() {
			t.Errorf("connection attempted to %s", d)
		}
	}

	strict, _ := newFetcher(Options{MaxRedirects: 1}, nil)
	onlyPublic(strict, origin.addr)
	_, err = strict.Get(context.Background(), origin.URL+"/hop/2")
	wantErr(t, err, ErrTooManyRedirects)
}

func TestSize(t *testing.T) {
	t.Parallel()
	const limit = 1000
	mux := http.NewServeMux()
	mux.HandleFunc("/exact", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, strings.Repeat("x", limit)) })
	mux.HandleFunc("/one-more", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, strings.Repeat("x", limit+1)) })
	// Announces a huge body, then stalls: only the header can refuse it in time.
	mux.HandleFunc("/announced", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(1<<30))
		w.Write([]byte("x"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	// Chunked with no end: only counting what was read can refuse it.
	mux.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 100))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	srv := newServer(t, mux)
	f, _ := newFetcher(Options{MaxBytes: limit, Timeout: 10 * time.Second, AllowPrivate: true}, nil)

	if got, err := f.Get(context.Background(), srv.URL+"/exact"); err != nil || len(got) != limit {
		t.Fatalf("exact limit: got %d bytes, %v", len(got), err)
	}
	// "/announced" and "/endless" never end by themselves: without the size
	// rule they would end at the timeout, with ErrTimeout, not ErrTooLarge.
	for _, path := range []string{"/one-more", "/announced", "/endless"} {
		_, err := f.Get(context.Background(), srv.URL+path)
		wantErr(t, err, ErrTooLarge)
	}
}

// endless is an infinite reader that counts what it hands out.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	e.n += int64(len(p))
	return len(p), nil
}

func TestReadAtMostStopsReading(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	r := &endless{}
	_, err := readAtMost(r, limit)
	wantErr(t, err, ErrTooLarge)
	if r.n > limit+1 {
		t.Errorf("read %d bytes, want at most %d", r.n, limit+1)
	}
	got, err := readAtMost(io.LimitReader(r, limit), limit)
	if err != nil || len(got) != limit {
		t.Errorf("exactly the limit: %d bytes, %v", len(got), err)
	}
}

// The whole download has one deadline, whether the server says nothing or
// trickles bytes for ever. The proof is the error, not a stopwatch: only that
// deadline's error names the limit (the transport's header timeout does not),
// and a trickle outlives every other bound, so that without the deadline the
// download ends only when the test's guard cancels it, with the guard's error.
func TestTimeout(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/trickle", func(w http.ResponseWriter, r *http.Request) {
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond): // the slow server under test
				w.Write([]byte("x"))
				w.(http.Flusher).Flush()
			}
		}
	})
	srv := newServer(t, mux)
	const limit = 300 * time.Millisecond
	f, _ := newFetcher(Options{Timeout: limit, AllowPrivate: true}, nil)
	for _, path := range []string{"/silent", "/trickle"} {
		_, err := f.Get(guarded(t), srv.URL+path)
		wantErr(t, err, ErrTimeout)
		if want := fmt.Sprintf("(limit %s)", limit); !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q is not the download's deadline %s", path, err, want)
		}
	}
}

// The end of the caller's context is reported as such, not as a timeout
// of the download.
func TestCallerCancel(t *testing.T) {
	t.Parallel()
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	f, _ := newFetcher(Options{AllowPrivate: true}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := f.Get(ctx, srv.URL)
	wantErr(t, err, context.DeadlineExceeded)
	if errors.Is(err, ErrTimeout) {
		t.Errorf("caller's deadline reported as ErrTimeout: %v", err)
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	srv := newServer(t, http.NotFoundHandler())
	f, _ := newFetcher(Options{AllowPrivate: true}, nil)
	_, err := f.Get(context.Background(), srv.URL+"/missing.pdf")
	wantErr(t, err, ErrStatus)
	if !strings.Contains(err.Error(), "404") {
		t.Errorf("error %q does not name the status", err)
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	srv := newServer(t, body(""))
	url := srv.URL
	srv.Close() // nothing listens on its port any more
	f, _ := newFetcher(Options{AllowPrivate: true}, nil)
	_, err := f.Get(context.Background(), url)
	wantErr(t, err, ErrUnreachable)

	nx, _ := newFetcher(Options{Resolver: testResolver(t, nil)}, nil)
	_, err = nx.Get(context.Background(), "http://nowhere.evil.test/")
	wantErr(t, err, ErrUnreachable)
}

func TestInvalidURL(t *testing.T) {
	t.Parallel()
	f, log := newFetcher(Options{}, nil)
	for _, u := range []string{
		"", "not a url", "/relative/path", "//host.example.test/doc.pdf",
		"file:///etc/passwd", "ftp://host.example.test/doc.pdf", "gopher://host.example.test/",
		"javascript:alert(1)", "http:opaque", "http:///no-host", "https://:443/",
		"http://user:hunter2@host.example.test/", "http://user@host.example.test/",
		"http://host.example.test:99999/", "http://host.example.test:0/", "http://[::1/", "http://%zz/",
	} {
		_, err := f.Get(context.Background(), u)
		if !errors.Is(err, ErrInvalidURL) {
			t.Errorf("%q: error %v, want ErrInvalidURL", u, err)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: error text leaks the password: %v", u, err)
		}
	}
	if d := log.dialed(); len(d) != 0 {
		t.Errorf("dialed %v", d)
	}
}

// Requests name quire, carry no cookies even when a hop sets some, and do
// not go through a proxy from the environment.
func TestRequestHygiene(t *testing.T) {
	t.Parallel()
	var userAgents, cookies []string
	mux := http.NewServeMux()
	mux.HandleFunc("/first", func(w http.ResponseWriter, r *http.Request) {
		userAgents = append(userAgents, r.UserAgent())
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cret", Path: "/"})
		http.Redirect(w, r, "/second", http.StatusFound)
	})
	mux.HandleFunc("/second", func(w http.ResponseWriter, r *http.Request) {
		userAgents = append(userAgents, r.UserAgent())
		cookies = append(cookies, r.Header.Values("Cookie")...)
	})
	srv := newServer(t, mux)
	f, _ := newFetcher(Options{AllowPrivate: true}, nil)
	if _, err := f.Get(context.Background(), srv.URL+"/first"); err != nil {
		t.Fatal(err)
	}
	for _, ua := range userAgents {
		if !strings.Contains(ua, "quire") {
			t.Errorf("User-Agent %q does not name quire", ua)
		}
	}
	if len(userAgents) != 2 || len(cookies) != 0 {
		t.Errorf("user agents %q, cookies %q; want 2 requests and no cookies", userAgents, cookies)
	}
	if f.client.Jar != nil || f.client.Transport.(*http.Transport).Proxy != nil {
		t.Error("the client has a cookie jar or a proxy")
	}
}
