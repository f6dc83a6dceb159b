package app

import (
	"context"
	"log/slog"
	"testing"

	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestEnginesOff: settings that turn both engines off open an App with
// no pool, whose conversion service is still there (it answers that the
// engines are off); Close has no pool to stop. The tests' servers that
// are lent shared pools (Options.Convert, Options.Chromium) go through
// the same path.
func TestEnginesOff(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir, cfg.ConvertWorkers, cfg.ChromiumWorkers = t.TempDir(), -1, -1
	a, err := Open(t.Context(), &cfg, Options{Logger: slog.New(slog.DiscardHandler), DB: storetest.Open(t, storetest.URL(t, "sqlite"))})
	if err != nil {
		t.Fatal(err)
	}
	if a.Convert != nil || a.Chromium != nil || a.Conversion == nil || a.converter != nil {
		t.Errorf("engines off: LibreOffice %v, Chromium %v, conversion %v, converter %v", a.Convert, a.Chromium, a.Conversion, a.converter)
	}
	if err := a.WaitReady(t.Context()); err != nil {
		t.Errorf("WaitReady without engines: %v", err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
}
