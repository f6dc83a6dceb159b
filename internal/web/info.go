package web

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Info is the body of GET /, in the shape of the hosted API's document.
type Info struct {
	Name           string `json:"name"`
	Version        string `json:"version"`
	Message        string `json:"message"`
	Endpoints      Links  `json:"endpoints"`
	Authentication string `json:"authentication"`
	Example        string `json:"example"`
	Links          Links  `json:"links"`
}

// Links maps names to URLs.
type Links map[string]string

const repository = "https://github.com/quire-dev/quire"

func (p *Pages) infoOf(r *http.Request) Info {
	base := p.baseURL(r)
	return Info{
		Name:    "quire",
		Version: p.deps.Version,
		Message: "Self-hosted document API: sign PDFs (PAdES), convert DOCX to PDF, count document opens.",
		Endpoints: Links{"convert": base + "/v1/convert", "sign": base + "/v1/sign", "verify": base + "/v1/verify",
			"health": base + "/v1/health", "docs": base + "/docs", "openapi": base + "/openapi.json"},
		Authentication: "Authorization: Bearer <API key>. Get a key by e-mail: GET /v1/auth/register?email=..., " +
			"then GET /v1/auth/verify?email=...&code=...",
		Example: "curl -X POST '" + base + "/v1/convert?from=docx' -H \"Authorization: Bearer $QUIRE_API_KEY\" " +
			"-F file=@document.docx -o document.pdf",
		Links: Links{"documentation": base + "/docs", "github": repository, "support": repository + "/issues",
			"verify": base + "/verify"},
	}
}

// info answers GET / in JSON, or in plain text for curl, wget and clients
// that prefer text/plain.
func (p *Pages) info(w http.ResponseWriter, r *http.Request) {
	in := p.infoOf(r)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Vary", "Accept, User-Agent")
	if !wantsText(r) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // "<API key>" as written: JSON for programs, not HTML
		enc.Encode(in)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "%s %s\n%s\n\n", in.Name, in.Version, in.Message)
	for _, k := range []string{"sign", "verify", "convert", "health", "docs", "openapi"} {
		fmt.Fprintf(w, "  %-8s %s\n", k, in.Endpoints[k])
	}
	fmt.Fprintf(w, "\nAuthentication: %s\n\nExample:\n  %s\n\nVerify a signed PDF in a browser: %s\nSource: %s\n",
		in.Authentication, in.Example, in.Links["verify"], in.Links["github"])
}

// wantsText reports whether the client is a command-line downloader or
// ranks text/plain above JSON in Accept.
func wantsText(r *http.Request) bool {
	ua := strings.ToLower(r.UserAgent())
	if strings.HasPrefix(ua, "curl/") || strings.HasPrefix(ua, "wget/") {
		return true
	}
	text, json := 0.0, 0.0
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			q, _ = strconv.ParseFloat(v, 64)
		}
		switch mt {
		case "text/plain":
			text = max(text, q)
		case "application/json", "*/*", "application/*":
			json = max(json, q)
		}
	}
	return text > json
}
