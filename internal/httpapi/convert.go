package httpapi

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/convert"
)

// multipartOverhead is the room a multipart body needs beyond its file.
const multipartOverhead = 1 << 20

func (s *Server) convertRoutes() []Route {
	return []Route{{Method: "POST", Path: "/v1/convert", Handler: s.convertDocument, MaxBody: s.opt.ConvertMaxBytes + multipartOverhead}}
}

// contentTypes are the media types of the output formats.
var contentTypes = map[string]string{
	convert.ToPDF:  "application/pdf",
	convert.ToDOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}

// convertDocument answers the PDF (or DOCX, to=docx) of the multipart field
// "file", converted with the options of the query (convert.JobOptions).
// The Server-Timing header tells the engine's own time from the queue's.
func (s *Server) convertDocument(w http.ResponseWriter, r *http.Request) {
	q := newQueryDecoder(r.URL.Query(), convertParams)
	from := strings.ToLower(q.string("from"))
	to := strings.ToLower(cmp.Or(q.string("to"), convert.ToPDF))
	opts := q.convertOptions()
	if from == "" {
		q.bad("from", "is required ("+strings.Join(convert.Formats, ", ")+")")
	}
	switch {
	case contentTypes[to] == "":
		q.bad("to", "must be pdf or docx")
	case slices.Contains(convert.Formats, from) && !convert.CanConvert(from, to):
		q.bad("to", "docx is made from "+strings.Join(convert.DOCXSources, " or ")+" only, not from "+from)
	default:
		if err := q.validated(opts.Validate(from, to)); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	if err := q.err("The conversion request is not valid."); err != nil {
		s.fail(w, r, err)
		return
	}
	pool := s.deps.Convert
	if pool == nil {
		s.fail(w, r, quire.Errorf(quire.CodeEngineBusy, "Conversion is disabled on this server."))
		return
	}
	in, err := FilePart(r, "file")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := pool.ConvertWith(r.Context(), in, from, to, opts)
	if err != nil {
		s.fail(w, r, convert.ToAPIError(err, pool.RetryAfter()))
		return
	}
	w.Header().Set("Content-Type", contentTypes[to])
	w.Header().Set("Server-Timing", fmt.Sprintf("engine;dur=%.1f, queue;dur=%.1f, total;dur=%.1f",
		ms(res.Engine.Seconds()), ms(res.Queued.Seconds()), ms(res.Total.Seconds())))
	w.Write(res.PDF)
}

func ms(seconds float64) float64 { return seconds * 1000 }

// convertStatus is the health check line of the conversion engine.
func convertStatus(pool *convert.Pool) string {
	if pool == nil {
		return "disabled"
	}
	st := pool.Status()
	line := fmt.Sprintf("%d/%d workers ready, %d busy, %d queued", st.Ready, st.Workers, st.Busy, st.Queued)
	if st.Ready == 0 && st.LastError != "" {
		line += "; last error: " + st.LastError
	}
	return line
}

// convertReady reports whether the engine can take a job now: disabled
// (nil) counts as ready, since nothing waits for it.
func convertReady(pool *convert.Pool) bool {
	if pool == nil {
		return true
	}
	st := pool.Status()
	return st.Ready+st.Busy > 0
}

// convertCollectors expose the engine's state and counters to /metrics.
func convertCollectors(pool *convert.Pool) []prometheus.Collector {
	return []prometheus.Collector{newConvertCollector(pool)}
}

// convertCollector reads the pool's state once per scrape and reports
// every conversion metric from that one snapshot.
type convertCollector struct {
	pool     *convert.Pool
	gauges   []convertMetric[convert.Status]
	counters []convertMetric[convert.Counters]
}

type convertMetric[T any] struct {
	desc  *prometheus.Desc
	value func(T) float64
}

func newConvertCollector(pool *convert.Pool) *convertCollector {
	gauge := func(name, help string, v func(convert.Status) int) convertMetric[convert.Status] {
		return convertMetric[convert.Status]{prometheus.NewDesc(name, help, nil, nil), func(s convert.Status) float64 { return float64(v(s)) }}
	}
	counter := func(name, help string, v func(convert.Counters) uint64) convertMetric[convert.Counters] {
		return convertMetric[convert.Counters]{prometheus.NewDesc(name, help, nil, nil), func(c convert.Counters) float64 { return float64(v(c)) }}
	}
	return &convertCollector{pool: pool,
		gauges: []convertMetric[convert.Status]{
			gauge("quire_convert_workers_ready", "Conversion workers warm and idle.", func(s convert.Status) int { return s.Ready }),
			gauge("quire_convert_workers_busy", "Conversion workers running a job.", func(s convert.Status) int { return s.Busy }),
			gauge("quire_convert_queue_length", "Conversions waiting for a worker.", func(s convert.Status) int { return s.Queued }),
		},
		counters: []convertMetric[convert.Counters]{
			counter("quire_convert_converted_total", "Documents converted.", func(c convert.Counters) uint64 { return c.Converted }),
			counter("quire_convert_failed_total", "Conversions that failed after reaching a worker.", func(c convert.Counters) uint64 { return c.Failed }),
			counter("quire_convert_worker_crashes_total", "Workers that died during a job.", func(c convert.Counters) uint64 { return c.Crashes }),
			counter("quire_convert_worker_timeouts_total", "Workers killed because a job exceeded its time.", func(c convert.Counters) uint64 { return c.Timeouts }),
			counter("quire_convert_worker_restarts_total", "Workers started to replace another.", func(c convert.Counters) uint64 { return c.Restarts }),
			counter("quire_convert_worker_recycled_total", "Workers retired after their job or memory limit.", func(c convert.Counters) uint64 { return c.Recycled }),
			counter("quire_convert_worker_over_memory_total", "Workers killed because a job exceeded their memory limit.", func(c convert.Counters) uint64 { return c.OverMemory }),
			counter("quire_convert_cold_total", "Documents converted by a one-off soffice because LibreOfficeKit refused them.", func(c convert.Counters) uint64 { return c.Cold }),
		},
	}
}

func (c *convertCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.gauges {
		ch <- m.desc
	}
	for _, m := range c.counters {
		ch <- m.desc
	}
}

func (c *convertCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.pool.Status() // one snapshot, so that the metrics of a scrape agree
	for _, m := range c.gauges {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, m.value(st))
	}
	for _, m := range c.counters {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.CounterValue, m.value(st.Counters))
	}
}
