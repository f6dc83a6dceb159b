package jobs

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire/internal/store"
)

type metrics struct {
	submitted *prometheus.CounterVec
	finished  *prometheus.CounterVec
	webhooks  *prometheus.CounterVec
	wait      prometheus.Histogram
	batch     prometheus.Histogram
	rescued   prometheus.Counter
}

func newMetrics(db *store.DB, reg prometheus.Registerer) *metrics {
	m := &metrics{
		submitted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quire_jobs_submitted_total",
			Help: "Jobs accepted (202), by operation."}, []string{"operation"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quire_jobs_finished_total",
			Help: "Jobs ended by this instance, by operation and status."}, []string{"operation", "status"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quire_webhook_attempts_total",
			Help: "Webhook delivery attempts, by outcome (delivered, failed)."}, []string{"outcome"}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "quire_job_duration_seconds",
			Help: "Time from a job's submission to its end.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 14)}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "quire_jobs_submit_batch_size",
			Help: "Submissions stored in one transaction (group commit).", Buckets: prometheus.ExponentialBuckets(1, 2, 8)}),
		rescued: prometheus.NewCounter(prometheus.CounterOpts{Name: "quire_jobs_rescued_total",
			Help: "River jobs (runs and webhook deliveries) that an instance's end left running, made available again by this instance."}),
	}
	if reg != nil {
		reg.MustRegister(m.submitted, m.finished, m.webhooks, m.wait, m.batch, m.rescued, &queueCollector{db: db})
	}
	return m
}

// queueCollector reads the queue's state from the database at each
// scrape: every instance's jobs, not only this one's.
type queueCollector struct{ db *store.DB }

var (
	jobsDesc   = prometheus.NewDesc("quire_jobs", "Jobs not yet ended, by state (queued, running), all instances.", []string{"state"}, nil)
	oldestDesc = prometheus.NewDesc("quire_jobs_oldest_queued_seconds", "How long the oldest queued job has waited; 0 when none waits.", nil, nil)
)

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc; ch <- oldestDesc }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := c.db.CountJobs(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(jobsDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n.Queued), "queued")
	ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n.Running), "running")
	wait := 0.0
	if !n.OldestQueued.IsZero() {
		wait = time.Since(n.OldestQueued).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, wait)
}
