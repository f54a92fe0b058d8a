// Package telemetry builds the one Prometheus registry a process exposes at
// /metrics: HTTP, connection pool and Temporal SDK metrics side by side.
package telemetry

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// NewRegistry returns a registry with the Go runtime and process collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// NewLogger returns the JSON logger every process uses.
func NewLogger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// TemporalMetrics reports the Temporal SDK's metrics into reg.
func TemporalMetrics(reg *prometheus.Registry) (client.MetricsHandler, io.Closer) {
	reporter := tallyprom.NewReporter(tallyprom.Options{Registerer: reg})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, time.Second)
	return sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)), closer
}

// RegisterPool exports the pgx pool's statistics.
func RegisterPool(reg *prometheus.Registry, pool *pgxpool.Pool) {
	reg.MustRegister(poolCollector{pool: pool})
}

var (
	poolAcquired = prometheus.NewDesc("valuecase_db_pool_acquired_conns", "Connections in use.", nil, nil)
	poolIdle     = prometheus.NewDesc("valuecase_db_pool_idle_conns", "Idle connections.", nil, nil)
	poolTotal    = prometheus.NewDesc("valuecase_db_pool_total_conns", "Open connections.", nil, nil)
	poolMax      = prometheus.NewDesc("valuecase_db_pool_max_conns", "Pool size limit.", nil, nil)
	poolWaits    = prometheus.NewDesc("valuecase_db_pool_empty_acquire_total", "Acquires that had to wait for a connection.", nil, nil)
	poolWaitSecs = prometheus.NewDesc("valuecase_db_pool_acquire_wait_seconds_total", "Time spent waiting for connections.", nil, nil)
)

type poolCollector struct{ pool *pgxpool.Pool }

func (p poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolAcquired, poolIdle, poolTotal, poolMax, poolWaits, poolWaitSecs} {
		ch <- d
	}
}

func (p poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := p.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolAcquired, prometheus.GaugeValue, float64(s.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(poolIdle, prometheus.GaugeValue, float64(s.IdleConns()))
	ch <- prometheus.MustNewConstMetric(poolTotal, prometheus.GaugeValue, float64(s.TotalConns()))
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolWaits, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaitSecs, prometheus.CounterValue, s.EmptyAcquireWaitTime().Seconds())
}
