package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	series   sync.Map // seriesKey → series: the vectors' children, looked up once
}

// seriesKey names the time series of a request; its values are bounded:
// route patterns, methodLabel, statuses.
type seriesKey struct {
	route, method string
	status        int
}

type series struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

func newMetrics(reg *prometheus.Registry, db Pinger) *metrics {
	m := &metrics{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quire_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "quire_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
	}
	up := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "quire_database_up",
		Help: "1 when the database answered a ping at scrape time, else 0.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if db.Ping(ctx) != nil {
			return 0
		}
		return 1
	})
	m.registry.MustRegister(m.requests, m.latency, up,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(route, method string, status int, elapsed time.Duration) {
	k := seriesKey{route, method, status}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, series{m.requests.WithLabelValues(route, method, strconv.Itoa(status)), m.latency.WithLabelValues(route, method)})
	}
	s := v.(series)
	s.requests.Inc()
	s.latency.Observe(elapsed.Seconds())
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
