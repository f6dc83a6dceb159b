package pdftools

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
)

// metrics are what an operator watches of the PDF operations: how many,
// how they ended, how long they took.
type metrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	workers  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quire_pdf_operations_total",
			Help: "PDF operations (POST /v1/pdf/{operation}) by operation and outcome: ok, or the error code."}, []string{"operation", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "quire_pdf_operation_seconds",
			Help: "Time of the PDF operations, by operation.", Buckets: prometheus.ExponentialBuckets(0.005, 3, 10)}, []string{"operation"}),
		workers: prometheus.NewGauge(prometheus.GaugeOpts{Name: "quire_pdf_workers",
			Help: "Worker processes of the PDF library (pdfcpu) running; each is killed when its request or job ends."}),
	}
	if reg != nil {
		reg.MustRegister(m.total, m.duration, m.workers)
	}
	return m
}

func (m *metrics) observe(op string, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = quire.ErrorCode(err)
	}
	m.total.WithLabelValues(op, outcome).Inc()
	m.duration.WithLabelValues(op).Observe(d.Seconds())
}
