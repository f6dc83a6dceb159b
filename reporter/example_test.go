package reporter_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/quire-dev/quire/reporter"
)

func Example() {
	// A stand-in for the telemetry endpoint.
	received := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			Events []struct{ DocumentID, DocumentCreatedAt string }
		}
		json.NewDecoder(r.Body).Decode(&p)
		received <- fmt.Sprintf("%s %s key=%s", p.Events[0].DocumentID, p.Events[0].DocumentCreatedAt, r.Header.Get("X-License-Key"))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	r := reporter.New(reporter.Config{
		LibraryVersion: "1.0.0",
		Telemetry:      reporter.Telemetry{Endpoint: srv.URL + "/v1/collect"},
	})
	id, err := r.Open(exampleDOCX())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("opened", id.ID)

	// Close waits for queued events; a program that exits sooner loses them.
	if err := r.Close(context.Background()); err != nil {
		fmt.Println(err)
	}
	fmt.Println("received", <-received)
	fmt.Printf("%+v\n", r.Stats())
	// Output:
	// opened HASH-8F81172B
	// received HASH-8F81172B 2024-01-15T10:30:00Z key=community-and-eval-agplv3
	// {Sent:1 Failed:0 Dropped:0}
}

// exampleDOCX builds a DOCX whose metadata holds a GUID and a creation time.
func exampleDOCX() []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, body := range map[string]string{
		"word/document.xml": `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>`,
		"word/settings.xml": `<w:settings xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:w15="http://schemas.microsoft.com/office/word/2012/wordml"><w15:docId w15:val="{1B2C3D4E-5F60-4A7B-8C9D-0E1F2A3B4C5D}"/></w:settings>`,
		"docProps/core.xml": `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dcterms="http://purl.org/dc/terms/"><dcterms:created>2024-01-15T10:30:00Z</dcterms:created></cp:coreProperties>`,
	} {
		f, _ := w.Create(name)
		f.Write([]byte(body))
	}
	w.Close()
	return buf.Bytes()
}
