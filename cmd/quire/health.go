package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/quire-dev/quire/internal/config"
)

// runHealth asks the local server whether it is ready (GET /v1/health) or,
// with --live, alive (GET /v1/health/live): exit 0 when it answers 200.
// It is the container image's HEALTHCHECK, which has no curl.
func runHealth(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	live := fs.Bool("live", false, "ask /v1/health/live (the process answers) instead of /v1/health (ready)")
	cfg, _, err := parseArgs(fs, "usage: quire health [--live]   (exit 0 when the local server is ready)", args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "quire health:", err)
		return 2
	}
	path := "/v1/health"
	if *live {
		path += "/live"
	}
	url := probeURL(cfg) + path
	// The probe reaches the server over loopback, where its certificate's
	// name does not match: only the answer matters here.
	c := &http.Client{Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	res, err := c.Get(url)
	if err != nil {
		fmt.Fprintln(stderr, "quire health:", err)
		return 1
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	fmt.Fprintf(stdout, "%s %d %s\n", url, res.StatusCode, body)
	if res.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}

// probeURL is the base URL of the server listening on QUIRE_ADDR, reached
// over loopback when it listens on every address.
func probeURL(cfg *config.Config) string {
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		host, port = "", "8080"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	if cfg.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}
