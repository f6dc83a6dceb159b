package app

import (
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/annotate"
	"github.com/quire-dev/quire/internal/chromium"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/libreoffice"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/safeinput"
)

func TestSignLevel(t *testing.T) {
	for _, c := range []struct {
		level, tsa, want string // want "" : refused
	}{{"", "", "B-B"}, {"", "https://tsa.example", "B-LT"}, {"B-LTA", "https://tsa.example", "B-LTA"},
		{"b-t", "https://tsa.example", "B-T"}, {"B-B", "https://tsa.example", "B-B"}, {"B-LT", "", ""}, {"B-X", "https://tsa.example", ""}} {
		cfg := config.Default()
		cfg.SignLevel, cfg.TSAURL = c.level, c.tsa
		l, err := signLevel(&cfg)
		if got := l.String(); (err != nil) != (c.want == "") || err == nil && got != c.want {
			t.Errorf("QUIRE_SIGN_LEVEL=%q QUIRE_TSA_URL=%q: %s, %v; want %q", c.level, c.tsa, got, err, c.want)
		}
		if err != nil && (Check(&cfg) == nil || !strings.Contains(Check(&cfg).Error(), "QUIRE_SIGN_LEVEL")) {
			t.Errorf("Check does not refuse QUIRE_SIGN_LEVEL=%q: %v", c.level, Check(&cfg))
		}
	}
}

func TestCheckRefusesKeyPrefix(t *testing.T) {
	cfg := config.Default()
	cfg.KeyPrefix = "SD"
	if err := Check(&cfg); err == nil || !strings.Contains(err.Error(), "QUIRE_KEY_PREFIX") {
		t.Errorf("QUIRE_KEY_PREFIX=SD: %v", err)
	}
}

// TestDefaultsAgree: config, a leaf, writes the services' defaults out;
// they must be the services' own.
func TestDefaultsAgree(t *testing.T) {
	cfg := config.Default()
	if got, want := pdfLimits(&cfg), pdf.DefaultLimits(); got.MaxObjects != want.MaxObjects || got.MaxDecodedSize != want.MaxDecodedSize || got.MaxNesting != want.MaxNesting {
		t.Errorf("PDF limits %+v, want pdf.DefaultLimits %+v", got, want)
	}
	if got, want := annotateLimits(&cfg), annotate.DefaultLimits; got != want {
		t.Errorf("annotate limits %+v, want annotate.DefaultLimits %+v", got, want)
	}
	if o := convertOptions(&cfg, nil); o.MaxNesting != safeinput.DefaultMaxNesting || o.MaxTableCells != safeinput.DefaultMaxTableCells || o.ProgramDir != libreoffice.DefaultProgramDir {
		t.Errorf("conversion defaults: nesting %d, cells %d, program %s", o.MaxNesting, o.MaxTableCells, o.ProgramDir)
	}
	for _, s := range cfg.Settings() {
		if s.Env == "QUIRE_CHROMIUM_PATH" && (!strings.Contains(s.Usage, chromium.ShellPath) || !strings.Contains(s.Usage, chromium.BrowserPath)) {
			t.Errorf("QUIRE_CHROMIUM_PATH's usage does not name %s and %s: %s", chromium.ShellPath, chromium.BrowserPath, s.Usage)
		}
	}
}
