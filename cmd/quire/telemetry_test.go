package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/store/storetest"
	"github.com/quire-dev/quire/internal/telemetry"
	"github.com/quire-dev/quire/internal/telemetry/telemetrytest"
)

func collectBody(docID string) string {
	return `{"superdocVersion":"1.46.3","browserInfo":{},"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"` +
		docID + `","documentCreatedAt":null}]}`
}

// crashKinds are the payloads of TestCrashLosesNoAcknowledgedEvent, in
// turn: the 1.x library's HASH- id under the community key, and under a
// license whose only host is docs.acme.example, the 2.x library's (a UUID
// per session) from that host, without an id (null) from it, and with an
// id from another host.
var crashKinds = []string{"1.x", "2.x", "anonymous", "other-host"}

// crashOpen returns the body, license key and document id (for the kinds
// that count documents) of the i-th request of client c.
func crashOpen(kind string, c, i int, acme string) (body, key, doc string) {
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", c, i)
	switch kind {
	case "1.x":
		id = fmt.Sprintf("HASH-CRASH-%02d-%06d", c, i)
		return collectBody(id), "", id
	case "2.x":
		return telemetrytest.Open2x(&id, "https://docs.acme.example"), acme, id
	case "anonymous":
		return telemetrytest.Open2x(nil, "https://docs.acme.example"), acme, ""
	}
	return telemetrytest.Open2x(&id, "https://elsewhere.example:8443"), acme, ""
}

// TestCrashLosesNoAcknowledgedEvent posts events of the 1.x and 2.x
// libraries from several clients, kills the server with SIGKILL in the
// middle, restarts it, and checks that every event answered 204 was
// counted, and none twice: in the documents, the opens, the anonymous
// opens and the other-host opens. The license's hosts are set with the
// CLI while the server runs, which applies them within
// QUIRE_TELEMETRY_HOSTS_REFRESH (shortened here).
func TestCrashLosesNoAcknowledgedEvent(t *testing.T) { // not parallel: its clients load the machine
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			data := t.TempDir()
			dbURL := storetest.URL(t, backend)
			env := []string{"QUIRE_DATABASE_URL=" + dbURL, "QUIRE_TELEMETRY_HOSTS_REFRESH=100ms"}
			in := start(t, data, env...)
			out, err := runCLI(t, data, env, "license", "create", "--org", "Acme", "--email", "ops@acme.example", "--hosts", "docs.acme.example")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			acme := lines[len(lines)-1]
			if err != nil || !strings.HasPrefix(acme, "ql_") {
				t.Fatalf("license create (%v):\n%s", err, out)
			}
			awaitHosts(t, in, acme)

			var mu sync.Mutex
			acked := map[string][]string{} // document ids (or "") by kind
			var wg sync.WaitGroup
			client := &http.Client{Timeout: 5 * time.Second}
			stop := time.Now().Add(10 * time.Second) // bounded even if the kill misbehaves
			for c := 0; c < 16; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; time.Now().Before(stop); i++ {
						kind := crashKinds[(c+i)%len(crashKinds)]
						body, key, doc := crashOpen(kind, c, i, acme)
						req, _ := http.NewRequest("POST", in.base+"/v1/collect", strings.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("X-License-Key", key)
						res, err := client.Do(req)
						if err != nil {
							return // the server is gone
						}
						res.Body.Close()
						if res.StatusCode == 204 {
							mu.Lock()
							acked[kind] = append(acked[kind], doc)
							mu.Unlock()
						}
					}
				}()
			}
			// Kill once enough opens of each kind were acknowledged (the
			// machine may be slow).
			for tick := time.Tick(50 * time.Millisecond); time.Now().Before(stop); <-tick {
				mu.Lock()
				enough := true
				for _, kind := range crashKinds {
					enough = enough && len(acked[kind]) >= 50
				}
				mu.Unlock()
				if enough {
					break
				}
			}
			in.cmd.Process.Kill() // SIGKILL: no shutdown, no flush
			wg.Wait()
			<-in.done
			for _, kind := range crashKinds {
				if len(acked[kind]) < 25 {
					t.Fatalf("only %d %s events acknowledged before the kill; the test proves nothing", len(acked[kind]), kind)
				}
			}

			start(t, data, env...) // recovery happens on open
			// A report counts what is pending (committed, not yet counted).
			out, err = runCLI(t, data, env, "usage", "--json", "--from", "2000-01-01T00:00:00Z", "--to", "2100-01-01T00:00:00Z")
			var rep telemetry.Report
			if err != nil || json.Unmarshal([]byte(out), &rep) != nil {
				t.Fatalf("usage after restart (%v):\n%s", err, out)
			}
			var reported telemetry.PeriodUsage
			for _, l := range rep.Licenses {
				for _, p := range l.Periods {
					reported.Opens += p.Opens
					reported.AnonymousOpens += p.AnonymousOpens
					reported.OtherHostOpens += p.OtherHostOpens
				}
			}
			counted, twice := map[string]bool{}, 0
			raw := storetest.SQL(t, dbURL)
			rows, err := raw.Query(`SELECT document_id, opens FROM documents`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id string
				var opens int64
				rows.Scan(&id, &opens)
				counted[id] = true
				if opens != 1 { // every document was sent once
					twice++
				}
			}
			rows.Close()
			var stored telemetry.PeriodUsage
			var dayOpens int64
			if err := raw.QueryRow(`SELECT COUNT(*), COALESCE(SUM(CASE WHEN document_id = '' THEN 1 ELSE 0 END), 0),
				COALESCE(SUM(CASE WHEN other_host THEN 1 ELSE 0 END), 0), (SELECT COALESCE(SUM(opens), 0) FROM document_days)
				FROM telemetry_events`).Scan(&stored.Opens, &stored.AnonymousOpens, &stored.OtherHostOpens, &dayOpens); err != nil {
				t.Fatal(err)
			}
			ownDocs := stored.Opens - stored.AnonymousOpens - stored.OtherHostOpens // no open here is both
			if twice > 0 || int64(len(counted)) != ownDocs || dayOpens != ownDocs || reported != stored {
				t.Errorf("%d documents counted more than once; stored %+v, with %d documents: counted %d documents, %d opens of documents, reported %+v; want them equal",
					twice, stored, ownDocs, len(counted), dayOpens, reported)
			}
			lost := 0
			for _, doc := range append(acked["1.x"], acked["2.x"]...) {
				if !counted[doc] {
					lost++
				}
			}
			if n := int64(len(acked["anonymous"])); reported.AnonymousOpens < n {
				t.Errorf("%d anonymous opens acknowledged, %d reported", n, reported.AnonymousOpens)
			}
			if n := int64(len(acked["other-host"])); reported.OtherHostOpens < n {
				t.Errorf("%d other-host opens acknowledged, %d reported", n, reported.OtherHostOpens)
			}
			total := 0
			for _, kind := range crashKinds {
				total += len(acked[kind])
			}
			t.Logf("%d events acknowledged before SIGKILL (%d anonymous, %d from another host), %d opens reported after restart, %d documents lost",
				total, len(acked["anonymous"]), len(acked["other-host"]), reported.Opens, lost)
			if lost > 0 || reported.Opens < int64(total) {
				t.Errorf("%d acknowledged documents lost; %d opens acknowledged, %d reported", lost, total, reported.Opens)
			}
		})
	}
}

var otherHostOpens = regexp.MustCompile(`(?m)^quire_telemetry_events_by_kind_total\{kind="other_host"\} (\d+)$`)

// awaitHosts waits until in has read the hosts of license: it sends opens
// under it from a host not in its list until one is counted as such. Each
// counted as an open of a document before is stored as one, as any open.
func awaitHosts(t *testing.T, in *instance, license string) {
	t.Helper()
	probe := 0
	waitUntil(t, "the license's hosts read", func() bool {
		probe++
		id := fmt.Sprintf("00000000-0000-4000-9000-%012x", probe)
		if st, body := in.do("POST", "/v1/collect", strings.NewReader(telemetrytest.Open2x(&id, "https://elsewhere.example:8443")),
			"Content-Type", "application/json", "X-License-Key", license); st != 204 {
			t.Fatalf("collect: %d %s", st, body)
		}
		_, metrics := in.get("/metrics")
		m := otherHostOpens.FindSubmatch(metrics)
		return m != nil && string(m[1]) != "0"
	})
}

func TestLicenseAndUsageCLI(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data, "QUIRE_ADMIN_TOKEN=cli-admin-token-0123456789")
	out, err := runCLI(t, data, nil, "license", "create", "--org", "Acme Corp", "--email", "Billing@Acme.example")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := lines[len(lines)-1]
	if err != nil || !strings.HasPrefix(key, "ql_") {
		t.Fatalf("license create (%v):\n%s", err, out)
	}
	for _, doc := range []string{"HASH-A", "HASH-A", "HASH-B"} {
		if st, body := in.do("POST", "/v1/collect", strings.NewReader(collectBody(doc)), "X-License-Key", key); st != 204 {
			t.Fatalf("collect: %d %s", st, body)
		}
	}
	out, err = runCLI(t, data, nil, "usage", "--json", "--from", "2000-01-01T00:00:00Z", "--to", "2100-01-01T00:00:00Z")
	var rep telemetry.Report
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Licenses) != 1 {
		t.Fatalf("usage --json (%v):\n%s", err, out)
	}
	l := rep.Licenses[0]
	if l.LicenseKey != key || !l.Registered || l.Organization == nil || *l.Organization != "Acme Corp" ||
		len(l.Periods) != 1 || l.Periods[0].NewDocuments != 2 || l.Periods[0].Opens != 3 {
		t.Errorf("usage %+v", l)
	}
	st, body := in.get("/v1/usage?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z", "Authorization", "Bearer cli-admin-token-0123456789")
	var viaAPI telemetry.Report
	json.Unmarshal(body, &viaAPI)
	a, _ := json.Marshal(viaAPI)
	c, _ := json.Marshal(rep)
	if st != 200 || string(a) != string(c) {
		t.Errorf("the API (%d) and the CLI disagree:\n%s\n%s", st, body, out)
	}
	if out, err := runCLI(t, data, nil, "usage"); err != nil || !strings.Contains(out, "Acme Corp") {
		t.Errorf("usage table (%v):\n%s", err, out)
	}
	out, _ = runCLI(t, data, nil, "license", "list")
	id := strings.Fields(lines[0])[1]
	if !strings.Contains(out, key) || !strings.Contains(out, "billing@acme.example") || !strings.Contains(out, id) {
		t.Fatalf("license list:\n%s", out)
	}
	if out, err := runCLI(t, data, nil, "license", "hosts", key, "Docs.Acme.example,www.acme.example"); err != nil {
		t.Fatalf("license hosts (%v):\n%s", err, out)
	}
	if out, _ := runCLI(t, data, nil, "license", "list"); !strings.Contains(out, "docs.acme.example,www.acme.example") {
		t.Errorf("hosts not listed:\n%s", out)
	}
	for _, bad := range [][]string{{key, "https://acme.example/"}, {"ql_none", "a.example"}, {key}} {
		if out, err := runCLI(t, data, nil, append([]string{"license", "hosts"}, bad...)...); err == nil {
			t.Errorf("license hosts %q succeeded:\n%s", bad, out)
		}
	}
	if out, err := runCLI(t, data, nil, "license", "hosts", key, "--clear"); err != nil {
		t.Fatalf("license hosts --clear (%v):\n%s", err, out)
	}
	if out, _ := runCLI(t, data, nil, "license", "list"); strings.Contains(out, "docs.acme.example") || !strings.Contains(out, "(any)") {
		t.Errorf("hosts not cleared:\n%s", out)
	}
	if out, err := runCLI(t, data, nil, "license", "revoke", id); err != nil {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if out, _ := runCLI(t, data, nil, "license", "list"); !strings.Contains(out, "revoked") {
		t.Errorf("revoked license not shown as such:\n%s", out)
	}
	if _, err := runCLI(t, data, nil, "license", "create", "--org", "X"); err == nil {
		t.Error("license create without --email succeeded")
	}
}
