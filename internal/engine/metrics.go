package engine

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector reports an engine's state and counters to Prometheus, every
// metric of a scrape from one Status snapshot, so that they agree. The
// LibreOffice pool registers its own (Options.Registerer), as the Chromium
// pool does.
type Collector struct {
	status   func() Status
	gauges   []metric[Status]
	counters []metric[Counters]
}

type metric[T any] struct {
	desc  *prometheus.Desc
	value func(T) float64
}

func newMetric[T any, N int | uint64](name, help string, v func(T) N) metric[T] {
	return metric[T]{prometheus.NewDesc(name, help, nil, nil), func(s T) float64 { return float64(v(s)) }}
}

// NewCollector reports the metrics of an engine whose processes (unit:
// "worker", "browser") report status, named prefix_... (quire_convert_workers_ready).
func NewCollector(prefix, unit string, status func() Status) *Collector {
	Unit := strings.ToUpper(unit[:1]) + unit[1:]
	gauge := newMetric[Status, int]
	counter := newMetric[Counters, uint64]
	return &Collector{status: status,
		gauges: []metric[Status]{
			gauge(prefix+"_"+unit+"s_ready", "Conversion "+unit+"s warm and idle.", func(s Status) int { return s.Ready }),
			gauge(prefix+"_"+unit+"s_busy", "Conversion "+unit+"s running a job.", func(s Status) int { return s.Busy }),
			gauge(prefix+"_queue_length", "Conversions waiting for a "+unit+".", func(s Status) int { return s.Queued }),
		},
		counters: []metric[Counters]{
			counter(prefix+"_converted_total", "Documents converted.", func(c Counters) uint64 { return c.Converted }),
			counter(prefix+"_failed_total", "Conversions that failed after reaching a "+unit+".", func(c Counters) uint64 { return c.Failed }),
			counter(prefix+"_"+unit+"_crashes_total", unit+"s that died during a job.", func(c Counters) uint64 { return c.Crashes }),
			counter(prefix+"_"+unit+"_timeouts_total", Unit+"s killed because a job exceeded its time.", func(c Counters) uint64 { return c.Timeouts }),
			counter(prefix+"_"+unit+"_restarts_total", Unit+"s started to replace another.", func(c Counters) uint64 { return c.Restarts }),
			counter(prefix+"_"+unit+"_recycled_total", Unit+"s retired after their job or memory limit.", func(c Counters) uint64 { return c.Recycled }),
			counter(prefix+"_"+unit+"_over_memory_total", Unit+"s killed because a job exceeded their memory limit.", func(c Counters) uint64 { return c.OverMemory }),
		},
	}
}

// WithCounter adds to c a counter of an engine's own, named name.
func (c *Collector) WithCounter(name, help string, v func(Counters) uint64) *Collector {
	c.counters = append(c.counters, newMetric(name, help, v))
	return c
}

func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.gauges {
		ch <- m.desc
	}
	for _, m := range c.counters {
		ch <- m.desc
	}
}

func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.status()
	for _, m := range c.gauges {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, m.value(st))
	}
	for _, m := range c.counters {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.CounterValue, m.value(st.Counters))
	}
}
