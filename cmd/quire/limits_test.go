package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func signRequest(event string) string {
	return `{"document":{"base64":"` + base64.StdEncoding.EncodeToString(pdftest.OnePage("limits")) +
		`"},"signer":{"email":"s@example.com","name":"Sam"},"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}],"eventId":"` + event + `"}`
}

// signLoad sends n sign requests with key, spread over the instances by
// 8 clients, and returns how many were answered 200 and 429.
func signLoad(t *testing.T, key string, n int, instances ...*instance) (ok, limited int) {
	t.Helper()
	var oks, limits, next atomic.Int64
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				in := instances[int(i)%len(instances)]
				req, _ := http.NewRequest("POST", in.base+"/v1/sign", strings.NewReader(signRequest(fmt.Sprintf("evt-%d-%d", c, i))))
				req.Header.Set("Authorization", "Bearer "+key)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				switch res.StatusCode {
				case 200:
					oks.Add(1)
				case 429:
					limits.Add(1)
				default:
					t.Errorf("sign: %d", res.StatusCode)
				}
			}
		}()
	}
	wg.Wait()
	return int(oks.Load()), int(limits.Load())
}

// signOne sends one signing to in and says whether it was answered (200)
// rather than refused by the key's limits (429).
func signOne(t *testing.T, key string, in *instance) bool {
	t.Helper()
	st, body := in.do("POST", "/v1/sign", strings.NewReader(signRequest(fmt.Sprintf("evt-probe-%d", time.Now().UnixNano()))), "Authorization", "Bearer "+key)
	if st != 200 && st != 429 {
		t.Fatalf("sign: %d %s", st, body)
	}
	return st == 200
}

// apiUsageCLI reads quire usage --api --json.
func apiUsageCLI(t *testing.T, data string, env []string) metering.Report {
	t.Helper()
	out, err := runCLI(t, data, env, "usage", "--api", "--json")
	var rep metering.Report
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("usage --api --json (%v):\n%s", err, out)
	}
	return rep
}

func signRequests(rep metering.Report, email string) int64 {
	for _, k := range rep.Keys {
		if k.Email == email {
			var n int64
			for _, p := range k.Periods {
				n += p.Operations.Sign.Requests
			}
			return n
		}
	}
	return -1
}

// Two instances on one PostgreSQL share a key's rate exactly, meter
// exactly, and apply a change of quire keys limit (within the refresh of internal/keylimit). The window
// is a UTC day, so that the test never spans two windows but at midnight.
func TestTwoInstancesShareAKeysRate(t *testing.T) {
	t.Parallel()
	db := storetest.URL(t, "postgres")
	env := []string{"QUIRE_DATABASE_URL=" + db, "QUIRE_SECRET=" + strings.Repeat("cd", 32), "QUIRE_KEY_RATE=40/24h", "QUIRE_KEY_MAX_CONCURRENT=0"}
	a := start(t, t.TempDir(), env...)
	b := start(t, t.TempDir(), env...)
	key := issueKey(t, a, b, "rate@example.com")
	if ok, limited := signLoad(t, key, 100, a, b); ok != 40 || limited != 60 {
		t.Fatalf("two instances answered %d signings and refused %d, want exactly 40 and 60", ok, limited)
	}
	if n := signRequests(apiUsageCLI(t, a.data, env), "rate@example.com"); n != 40 {
		t.Errorf("metered %d signings, want 40", n)
	}

	out, err := runCLI(t, a.data, env, "keys", "list")
	id := regexp.MustCompile(`key_[0-9a-f]+`).FindString(out)
	if err != nil || id == "" {
		t.Fatalf("keys list (%v): %s", err, out)
	}
	if out, err := runCLI(t, a.data, env, "keys", "limit", id, "--rate", "45/24h", "--quota", "1000/month"); err != nil || !strings.Contains(out, "rate 45/24h") {
		t.Fatalf("keys limit (%v): %s", err, out)
	}
	// Each instance answers a signing again once it has read the new rate
	// (within the refresh of internal/keylimit): one more signing on each.
	for _, in := range []*instance{a, b} {
		waitUntil(t, "a signing answered under the raised rate", func() bool { return signOne(t, key, in) })
	}
	ok, _ := signLoad(t, key, 20, a, b)
	if ok += 2; ok < 1 || ok > 5 {
		t.Errorf("after raising the rate to 45: %d more signings answered, want 1 to 5", ok)
	}
	out, err = runCLI(t, a.data, env, "keys", "list", "--json")
	var keys []struct {
		ID     string
		Limits struct {
			Concurrent  int
			Rate, Quota string
			Overridden  bool
		}
		ThisMonth metering.Operations
	}
	if err != nil || json.Unmarshal([]byte(out), &keys) != nil || len(keys) != 1 {
		t.Fatalf("keys list --json (%v): %s", err, out)
	}
	if l := keys[0].Limits; l.Rate != "45/24h" || l.Quota != "1000/month" || l.Concurrent != 0 || !l.Overridden || keys[0].ThisMonth.Sign.Requests != int64(40+ok) {
		t.Errorf("keys list --json: %s", out)
	}
	if out, err := runCLI(t, a.data, env, "keys", "limit", id, "--clear"); err != nil {
		t.Fatalf("keys limit --clear (%v): %s", err, out)
	}
	if out, err := runCLI(t, a.data, env, "keys", "limit", "key_nope", "--rate", "1/1m"); err == nil || !strings.Contains(out, "no key") {
		t.Errorf("keys limit of an unknown key (%v): %s", err, out)
	}
	if out, err := runCLI(t, a.data, env, "keys", "limit", id, "--rate", "fast"); err == nil || !strings.Contains(out, `rate "fast": want N/DURATION`) {
		t.Errorf("keys limit with a bad rate (%v): %s", err, out)
	}
}

// Two instances on one PostgreSQL hold a key's monthly quota exactly
// under concurrent requests: the quota's signings are answered, the rest
// refused with 429, and exactly the quota is counted.
func TestTwoInstancesHoldAKeysQuota(t *testing.T) {
	t.Parallel()
	db := storetest.URL(t, "postgres")
	env := []string{"QUIRE_DATABASE_URL=" + db, "QUIRE_SECRET=" + strings.Repeat("ef", 32), "QUIRE_KEY_QUOTA=25/month", "QUIRE_KEY_RATE=0", "QUIRE_KEY_MAX_CONCURRENT=0"}
	a := start(t, t.TempDir(), env...)
	b := start(t, t.TempDir(), env...)
	key := issueKey(t, a, b, "quota@example.com")
	if ok, limited := signLoad(t, key, 60, a, b); ok != 25 || limited != 35 {
		t.Fatalf("two instances answered %d signings and refused %d, want exactly 25 and 35", ok, limited)
	}
	if n := signRequests(apiUsageCLI(t, a.data, env), "quota@example.com"); n != 25 {
		t.Errorf("metered %d signings, want 25", n)
	}
}

// Every signing a client received answered before a kill -9 is counted.
func TestCrashLosesNoAnsweredRequest(t *testing.T) { // not parallel: its clients load the machine, and give up at a 5 s answer
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			data := t.TempDir()
			env := []string{"QUIRE_DATABASE_URL=" + storetest.URL(t, backend), "QUIRE_KEY_RATE=0", "QUIRE_KEY_MAX_CONCURRENT=0"}
			in := start(t, data, env...)
			key := issueKey(t, in, in, "crash@example.com")
			var answered atomic.Int64
			var wg sync.WaitGroup
			client := &http.Client{Timeout: 5 * time.Second}
			stop := time.Now().Add(90 * time.Second) // bounded even if the kill misbehaves
			const clients = 8
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; time.Now().Before(stop); i++ {
						req, _ := http.NewRequest("POST", in.base+"/v1/sign", strings.NewReader(signRequest(fmt.Sprintf("evt-%d-%d", c, i))))
						req.Header.Set("Authorization", "Bearer "+key)
						res, err := client.Do(req)
						if err != nil {
							return // the server is gone
						}
						_, err = io.Copy(io.Discard, res.Body)
						res.Body.Close()
						if res.StatusCode == 200 && err == nil {
							answered.Add(1)
						}
					}
				}()
			}
			// Kill once enough answers arrived (the machine may be slow).
			for wait, tick := time.Now().Add(60*time.Second), time.Tick(50*time.Millisecond); answered.Load() < 100 && time.Now().Before(wait); <-tick {
			}
			in.cmd.Process.Kill() // SIGKILL: no shutdown, no flush
			wg.Wait()
			<-in.done
			if answered.Load() < 100 {
				t.Fatalf("only %d signings answered before the kill; the test proves nothing\n%s", answered.Load(), in.logs)
			}
			// Counted: every answered one, and at most the one in progress
			// per client whose answer the kill cut off after its count.
			n := signRequests(apiUsageCLI(t, data, env), "crash@example.com")
			t.Logf("%d signings answered before SIGKILL, %d counted", answered.Load(), n)
			if n < answered.Load() || n > answered.Load()+clients {
				t.Errorf("%d signings counted, want from %d to %d", n, answered.Load(), answered.Load()+clients)
			}
		})
	}
}
