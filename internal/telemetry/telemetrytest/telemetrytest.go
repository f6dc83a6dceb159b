// Package telemetrytest holds what the editor library superdoc 2.x sends
// to POST /v1/collect (superdoc-2x.json: its payloads' shapes, written
// down from requests its telemetry code made, with values of our own),
// for the tests and benchmarks of intake.
package telemetrytest

import (
	_ "embed"
	"encoding/json"
	"net/url"
)

//go:embed superdoc-2x.json
var fixtures []byte

// Payload is one request body of the 2.x library.
type Payload struct {
	Name     string          `json:"name"`
	Scenario string          `json:"scenario"`
	Body     json.RawMessage `json:"body"`
}

// Superdoc2x returns the payloads of superdoc-2x.json, by name.
func Superdoc2x() map[string]Payload {
	var f struct{ Payloads []Payload }
	if err := json.Unmarshal(fixtures, &f); err != nil {
		panic("telemetrytest: superdoc-2x.json: " + err.Error())
	}
	out := map[string]Payload{}
	for _, p := range f.Payloads {
		out[p.Name] = p
	}
	return out
}

// Open2x is the body that the 2.x library sends for one open of
// documentID (nil: null, as when the editor has no id) on a page whose
// origin is origin (such as https://docs.acme.example:8443): the shape of
// superdoc-2x.json, members in the same order.
func Open2x(documentID *string, origin string) string {
	host := ""
	if u, err := url.Parse(origin); err == nil {
		host = u.Hostname()
	}
	return `{"superdocVersion":"2.11.0","browserInfo":{"userAgent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",` +
		`"currentUrl":` + quote(origin) + `,"hostname":` + quote(host) + `,"screenSize":{"width":1280,"height":720}},` +
		`"events":[{"timestamp":"2026-11-27T08:00:01.250Z","documentId":` + idJSON(documentID) + `,"documentCreatedAt":null}]}`
}

func idJSON(id *string) string {
	if id == nil {
		return "null"
	}
	return quote(*id)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
