package config

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

func TestEnvironmentAndFlags(t *testing.T) {
	env := map[string]string{"QUIRE_ADDR": "127.0.0.1:9", "QUIRE_CODE_TTL": "20m", "QUIRE_RATE_VERIFY_IP": "3/1m",
		"QUIRE_MAX_BODY_BYTES": "2MiB", "QUIRE_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.1/32",
		"QUIRE_CORS_ORIGINS": "https://App.example, http://localhost:3000"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c, err := Bind(fs, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--addr", ":7000"}); err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":7000" || c.CodeTTL != 20*time.Minute || c.VerifyPerIP.N != 3 || c.MaxBodyBytes != 2<<20 ||
		len(c.TrustedProxies) != 2 || c.KeyPrefix != "sd" || c.CORSOrigins.String() != "https://app.example,http://localhost:3000" {
		t.Fatalf("config = %+v", c)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestBadValuesNameTheVariable(t *testing.T) {
	for k, v := range map[string]string{"QUIRE_CODE_TTL": "soon", "QUIRE_MAX_BODY_BYTES": "-1", "QUIRE_TRUSTED_PROXIES": "10.0.0.0",
		"QUIRE_RATE_REGISTER_IP": "many", "QUIRE_CODE_MAX_ATTEMPTS": "x", "QUIRE_CORS_ORIGINS": "https://app.example/page"} {
		_, err := Bind(flag.NewFlagSet("t", flag.ContinueOnError), func(name string) string {
			if name == k {
				return v
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
	for _, c := range []Config{
		func() Config { c := Default(); c.LogLevel = "loud"; return c }(),
		func() Config { c := Default(); c.AdminToken = "short"; return c }(),
		func() Config { c := Default(); c.CodeMaxAttempts = 0; return c }(),
		func() Config { c := Default(); c.CollectCommitTimeout = 0; return c }(),
		func() Config { c := Default(); c.ShutdownTimeout = 0; return c }(),
		func() Config { c := Default(); c.TLSCert = "cert.pem"; return c }(),
		func() Config { c := Default(); c.SigningOrg = strings.Repeat("o", 65); return c }(),
		func() Config { c := Default(); c.PDFMaxNesting = 0; return c }(),
		func() Config { c := Default(); c.ConvertMaxFiles = 0; return c }(),
		func() Config { c := Default(); c.CollectGatherWait = 2 * time.Second; return c }(),
	} {
		if err := c.Check(); err == nil {
			t.Errorf("Check accepted %+v", c)
		}
	}
}

// TestDocsListEverySetting keeps the table of docs/configuration.md
// true: one row per setting, with its flag and its default.
func TestDocsListEverySetting(t *testing.T) {
	readme, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	c := Default()
	for _, s := range c.Settings() {
		def := "`" + s.Value.String() + "`"
		if s.Value.String() == "" {
			def = "(empty)"
		}
		row := "| `" + s.Env + "` | `--" + s.Flag + "` | " + def + " |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("docs/configuration.md lacks the row %s", row)
		}
	}
}

func TestSecretsAreNeverPrinted(t *testing.T) {
	env := map[string]string{"QUIRE_ADMIN_TOKEN": "admin-token-hunter2-1234", "QUIRE_DATABASE_URL": "postgres://u:dbpass-hunter2@h/db",
		"QUIRE_SMTP_URL": "smtp://u:smtp-hunter2@h:587", "QUIRE_SECRET": strings.Repeat("ab", 32), "QUIRE_SIGNING_P12_PASSWORD": "p12-hunter2"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var out strings.Builder
	fs.SetOutput(&out)
	c, err := Bind(fs, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	fs.Parse([]string{"--no-such-flag"}) // prints the usage with every default
	if c.AdminToken != env["QUIRE_ADMIN_TOKEN"] || c.DatabaseURL != env["QUIRE_DATABASE_URL"] {
		t.Fatal("the secrets were not read")
	}
	if strings.Contains(out.String(), "hunter2") || strings.Contains(out.String(), strings.Repeat("ab", 32)) || !strings.Contains(out.String(), "QUIRE_ADMIN_TOKEN") {
		t.Errorf("usage output shows a secret:\n%s", out.String())
	}
}
