package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/store/storetest"
	"github.com/quire-dev/quire/internal/telemetry"
)

func collectBody(docID string) string {
	return `{"superdocVersion":"1.46.3","browserInfo":{},"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"` +
		docID + `","documentCreatedAt":null}]}`
}

// TestCrashLosesNoAcknowledgedEvent posts events from several clients,
// kills the server with SIGKILL in the middle, restarts it, and checks that
// every event answered 204 was counted, and none twice.
func TestCrashLosesNoAcknowledgedEvent(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			data := t.TempDir()
			dbURL := storetest.URL(t, backend)
			env := []string{"QUIRE_DATABASE_URL=" + dbURL}
			in := start(t, data, env...)

			var mu sync.Mutex
			var acked []string
			var wg sync.WaitGroup
			client := &http.Client{Timeout: 5 * time.Second}
			stop := time.Now().Add(10 * time.Second) // bounded even if the kill misbehaves
			for c := 0; c < 16; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; time.Now().Before(stop); i++ {
						id := fmt.Sprintf("HASH-CRASH-%02d-%06d", c, i)
						res, err := client.Post(in.base+"/v1/collect", "application/json", strings.NewReader(collectBody(id)))
						if err != nil {
							return // the server is gone
						}
						res.Body.Close()
						if res.StatusCode == 204 {
							mu.Lock()
							acked = append(acked, id)
							mu.Unlock()
						}
					}
				}()
			}
			time.Sleep(1500 * time.Millisecond)
			in.cmd.Process.Kill() // SIGKILL: no shutdown, no flush
			wg.Wait()
			<-in.done
			if len(acked) < 100 {
				t.Fatalf("only %d events acknowledged before the kill; the test proves nothing", len(acked))
			}

			start(t, data, env...) // recovery happens on open
			// A report counts what is pending (committed, not yet counted).
			if out, err := runCLI(t, data, env, "usage", "--json"); err != nil {
				t.Fatalf("usage after restart (%v):\n%s", err, out)
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
			var events, dayOpens int
			if err := raw.QueryRow(`SELECT (SELECT COUNT(*) FROM telemetry_events), (SELECT COALESCE(SUM(opens), 0) FROM document_days)`).Scan(&events, &dayOpens); err != nil {
				t.Fatal(err)
			}
			if twice > 0 || events != len(counted) || dayOpens != events {
				t.Errorf("%d documents counted more than once; %d events stored, %d documents and %d opens counted: want them equal", twice, events, len(counted), dayOpens)
			}
			lost := 0
			for _, id := range acked {
				if !counted[id] {
					lost++
				}
			}
			t.Logf("%d events acknowledged before SIGKILL, %d counted after restart, %d lost", len(acked), len(counted), lost)
			if lost > 0 {
				t.Errorf("%d acknowledged events lost", lost)
			}
		})
	}
}

func TestLicenseAndUsageCLI(t *testing.T) {
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
