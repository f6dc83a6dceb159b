package libreoffice

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire-dev/quire/internal/engine"
)

// TestPoolRegistersItsMetrics: the pool puts the engine's metrics where
// its options say, whether or not a worker has started.
func TestPoolRegistersItsMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := NewPool(Options{PoolOptions: engine.PoolOptions{Workers: 1, Executable: "/bin/false", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Dir: t.TempDir(), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	for _, want := range []string{"quire_convert_workers_ready", "quire_convert_queue_length", "quire_convert_converted_total",
		"quire_convert_worker_crashes_total", "quire_convert_cold_total"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s among %v", want, names)
		}
	}
}
