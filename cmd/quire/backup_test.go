package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// signed is a document signed by the original server, and when.
type signed struct {
	pdf           []byte
	eventID       string
	beforeBackupA bool
}

// TestBackupWhileServingAndRestore takes a backup while telemetry posts
// and signings are in flight, and one after the load: each, restored into
// a fresh directory and served, accepts the keys, verifies the documents
// signed before it and reports the usage recorded before it.
func TestBackupWhileServingAndRestore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	limits := []string{"QUIRE_RATE_REGISTER_IP=0", "QUIRE_RATE_VERIFY_IP=0"}
	in := start(t, data, limits...)
	var keys []string
	for i := range 3 {
		keys = append(keys, issueKey(t, in, in, fmt.Sprintf("backup%d@example.com", i)))
	}

	var (
		mu          sync.Mutex
		acked       int // telemetry events acknowledged (204)
		docs        []signed
		backupAWent bool
		stop        = make(chan struct{})
		wg          sync.WaitGroup
	)
	for g := range 4 { // telemetry posts, each with a new document
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"events":[{"timestamp":"2026-11-22T09:34:00Z","documentId":"HASH-%04X%04X"}]}`, g, i)
				if st, b := in.do("POST", "/v1/collect", strings.NewReader(body), "Content-Type", "application/json"); st != 204 {
					t.Errorf("collect: %d %s", st, b)
					return
				}
				mu.Lock()
				acked++
				mu.Unlock()
			}
		}()
	}
	for g := range 2 { // signings
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("evt-%d-%d", g, i)
				pdf := signPDF(t, in, keys[i%len(keys)], id)
				if pdf == nil {
					return
				}
				mu.Lock()
				// In backup A only when answered (so recorded) before it began:
				// a signing under way when it began may be recorded after.
				docs = append(docs, signed{pdf, id, !backupAWent})
				mu.Unlock()
			}
		}()
	}
	deadline := time.Now().Add(time.Minute)
	for ready, tick := false, time.Tick(10*time.Millisecond); !ready; <-tick { // some of each before the backup
		mu.Lock()
		ready = acked >= 200 && len(docs) >= 4
		mu.Unlock()
		if time.Now().After(deadline) {
			close(stop)
			wg.Wait()
			t.Fatalf("the load did not get going: %d events, %d documents", acked, len(docs))
		}
	}
	mu.Lock()
	backupAWent, ackedBeforeA := true, acked
	mu.Unlock()
	archiveA := filepath.Join(dir, "a.tar.gz")
	if out, err := runCLI(t, data, nil, "backup", archiveA); err != nil {
		t.Fatalf("backup under load (%v):\n%s", err, out)
	}
	mu.Lock()
	ackedAfterA := acked
	mu.Unlock()
	close(stop)
	wg.Wait()
	archiveB := filepath.Join(dir, "b.tar.gz")
	if out, err := runCLI(t, data, nil, "backup", archiveB); err != nil {
		t.Fatalf("backup (%v):\n%s", err, out)
	}
	t.Logf("%d events acknowledged before backup A, %d by its end, %d in all; %d documents signed", ackedBeforeA, ackedAfterA, acked, len(docs))
	wantUsage := usageJSON(t, data)

	for _, c := range []struct {
		archive string
		all     bool // taken after the load: everything is in it
	}{{archiveA, false}, {archiveB, true}} {
		t.Run(filepath.Base(c.archive), func(t *testing.T) {
			checkArchiveModes(t, c.archive)
			restored := filepath.Join(t.TempDir(), "restored")
			if out, err := runCLI(t, restored, nil, "restore", c.archive); err != nil {
				t.Fatalf("restore (%v):\n%s", err, out)
			}
			checkRestoredModes(t, restored)
			r := start(t, restored, limits...)
			for _, key := range keys {
				if !authorized(r, key) {
					t.Errorf("key %s… refused after restore", key[:11])
				}
			}
			verified := 0
			for _, d := range docs {
				if !c.all && !d.beforeBackupA {
					continue
				}
				st, b := r.do("POST", "/v1/verify", strings.NewReader(`{"document":{"base64":"`+base64.StdEncoding.EncodeToString(d.pdf)+`"}}`),
					"Content-Type", "application/json")
				if st != 200 || !strings.Contains(string(b), `"valid":true`) || !strings.Contains(string(b), `"eventId":"`+d.eventID+`"`) ||
					!strings.Contains(string(b), `"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}]`) {
					t.Errorf("document %s after restore: %d %.300s", d.eventID, st, b)
				}
				verified++
			}
			if verified == 0 {
				t.Fatal("no document checked")
			}
			got := usageJSON(t, restored)
			if c.all && got != wantUsage {
				t.Errorf("usage after restore:\n%s\nwant:\n%s", got, wantUsage)
			}
			if opens := totalOpens(t, got); !c.all && (opens < ackedBeforeA || opens > ackedAfterA) {
				t.Errorf("restored %d opens, want between %d and %d", opens, ackedBeforeA, ackedAfterA)
			}
		})
	}

	if out, err := runCLI(t, data, nil, "restore", archiveB); err == nil || !strings.Contains(out, "not empty") {
		t.Errorf("restore into a used data directory (%v):\n%s", err, out)
	}
	if out, err := runCLI(t, data, nil, "backup", archiveB); err == nil || !strings.Contains(out, "exists") {
		t.Errorf("backup over an existing file (%v):\n%s", err, out)
	}
}

// signPDF signs a one-page PDF on in with key; nil after reporting an error.
func signPDF(t *testing.T, in *instance, key, eventID string) []byte {
	req := `{"document":{"base64":"` + base64.StdEncoding.EncodeToString(pdftest.OnePage("Backup "+eventID)) + `"},
		"signer":{"email":"s@example.com","name":"Sam Signer"},"eventId":"` + eventID + `",
		"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}]}`
	st, b := in.do("POST", "/v1/sign", strings.NewReader(req), "Authorization", "Bearer "+key, "Content-Type", "application/json")
	var res struct{ Document struct{ Base64 string } }
	if st != 200 || json.Unmarshal(b, &res) != nil {
		t.Errorf("sign: %d %.300s", st, b)
		return nil
	}
	pdf, _ := base64.StdEncoding.DecodeString(res.Document.Base64)
	return pdf
}

func usageJSON(t *testing.T, data string) string {
	t.Helper()
	out, err := runCLI(t, data, nil, "usage", "--json", "--from", "2000-01-01T00:00:00Z", "--to", "2100-01-01T00:00:00Z")
	if err != nil {
		t.Fatalf("usage (%v):\n%s", err, out)
	}
	return out
}

func totalOpens(t *testing.T, usage string) int {
	var u struct {
		Licenses []struct{ Periods []struct{ Opens int } }
	}
	if err := json.Unmarshal([]byte(usage), &u); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range u.Licenses {
		for _, p := range l.Periods {
			n += p.Opens
		}
	}
	return n
}

// checkArchiveModes: the archive and every file in it are 0600.
func checkArchiveModes(t *testing.T, archive string) {
	if fi, err := os.Stat(archive); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("archive mode %v (%v), want 0600", fi.Mode(), err)
	}
	b, _ := os.ReadFile(archive)
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	names := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[hdr.Name] = true
		if hdr.Mode != 0o600 {
			t.Errorf("%s has mode %o in the archive", hdr.Name, hdr.Mode)
		}
	}
	for _, want := range []string{"manifest.json", "quire.db", "secret", "webhook-secret", "signing/signing-key.pem", "signing/signing.pem"} {
		if !names[want] {
			t.Errorf("the archive lacks %s", want)
		}
	}
}

// checkRestoredModes: files 0600, directories 0700.
func checkRestoredModes(t *testing.T, dir string) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return err
		}
		fi, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s restored with mode %v, want %v", path, fi.Mode().Perm(), want)
		}
		return nil
	})
}

// TestBackupOnPostgreSQL: the archive holds the secret and the signing
// identity, not the database (pg_dump's job), and says so.
func TestBackupOnPostgreSQL(t *testing.T) {
	t.Parallel()
	env := []string{"QUIRE_DATABASE_URL=" + storetest.URL(t, "postgres")}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if out, err := runCLI(t, data, env, "init"); err != nil {
		t.Fatalf("init (%v):\n%s", err, out)
	}
	archive := filepath.Join(dir, "keys.tar.gz")
	out, err := runCLI(t, data, env, "backup", archive)
	if err != nil || !strings.Contains(out, "pg_dump") {
		t.Fatalf("backup (%v):\n%s", err, out)
	}
	restored := filepath.Join(dir, "restored")
	if out, err := runCLI(t, restored, env, "restore", archive); err != nil || !strings.Contains(out, "pg_dump") {
		t.Fatalf("restore (%v):\n%s", err, out)
	}
	for _, name := range []string{"secret", "signing/signing.pem", "signing/signing-key.pem"} {
		want, _ := os.ReadFile(filepath.Join(data, name))
		if got, err := os.ReadFile(filepath.Join(restored, name)); err != nil || !bytes.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s not restored as it was (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(restored, "quire.db")); err == nil {
		t.Error("a SQLite database appeared in the restore of a PostgreSQL backup")
	}
	if out, err := runCLI(t, restored, env, "keys", "list"); err != nil {
		t.Errorf("keys list on the restored directory (%v):\n%s", err, out)
	}
}
