package reporter

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/docid"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/store/storetest"
	"github.com/quire-dev/quire/internal/telemetry"
)

// TestAgainstQuire reports opens to a real quire server: every open
// arrives, and the document is counted once however often it is opened.
func TestAgainstQuire(t *testing.T) {
	dbURL := storetest.URL(t, "sqlite")
	srv := apitest.Start(t, storetest.Open(t, dbURL), apitest.Config{})
	r := New(Config{LibraryVersion: "go-test", Telemetry: Telemetry{Endpoint: srv.URL + "/v1/collect"}})
	doc := testDOCX(t)
	var id docid.Identity
	for i := 0; i < 3; i++ {
		var err error
		if id, err = r.Open(doc); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Sent != 3 || st.Failed != 0 || st.Dropped != 0 {
		t.Fatalf("stats %+v, want 3 sent", st)
	}

	req, _ := http.NewRequest("GET", srv.URL+"/v1/usage?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z", nil)
	req.Header.Set("Authorization", "Bearer "+apitest.AdminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var rep telemetry.Report
	if err := json.NewDecoder(res.Body).Decode(&rep); err != nil || len(rep.Licenses) != 1 {
		t.Fatalf("usage: %v %+v", err, rep)
	}
	l := rep.Licenses[0]
	if l.LicenseKey != quire.CommunityLicenseKey || len(l.Periods) != 1 || l.Periods[0].NewDocuments != 1 || l.Periods[0].Opens != 3 {
		t.Errorf("usage %+v, want one community document opened 3 times", l)
	}
	var stored string
	var opens int
	if err := storetest.SQL(t, dbURL).QueryRow(`SELECT document_id, opens FROM documents`).Scan(&stored, &opens); err != nil ||
		stored != id.ID || opens != 3 {
		t.Errorf("stored document %q with %d opens (%v), want %q with 3", stored, opens, err, id.ID)
	}
}
