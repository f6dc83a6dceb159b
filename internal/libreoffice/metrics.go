package libreoffice

import "github.com/quire-dev/quire/internal/engine"

// collector is the LibreOffice pool's: the engine's metrics and the
// documents a cold soffice converted (cold.go).
func (p *Pool) collector() *engine.Collector {
	return engine.NewCollector("quire_convert", "worker", p.Status).WithCounter("quire_convert_cold_total",
		"Documents converted by a one-off soffice because LibreOfficeKit refused them.", func(c engine.Counters) uint64 { return c.Cold })
}
