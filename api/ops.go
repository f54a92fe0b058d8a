package api

import (
	"context"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/api/enums/v1"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/wire"
)

type dependencyState struct {
	Status    string  `json:"status"` // up or down
	LatencyMS float64 `json:"latency_ms"`
	Error     string  `json:"error,omitempty"`
}

// health reports each dependency. PostgreSQL down is 503 (nothing works);
// Temporal or Redis down is "degraded" with 200: CRUD works, workflows start
// later, limits are counted per process.
func (s *Server) health(c *fiber.Ctx) error {
	check := func(f func(context.Context) error) dependencyState {
		ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
		defer cancel()
		start := time.Now()
		err := f(ctx)
		st := dependencyState{Status: "up", LatencyMS: float64(time.Since(start).Microseconds()) / 1000}
		if err != nil {
			st.Status, st.Error = "down", "unreachable"
		}
		return st
	}
	checks := map[string]dependencyState{"postgres": check(s.Pool.Ping)}
	if s.Temporal != nil {
		checks["temporal"] = check(func(ctx context.Context) error {
			_, err := s.Temporal.CheckHealth(ctx, nil)
			return err
		})
	}
	if shared, ok := s.Limits.(interface{ Ping(context.Context) error }); ok {
		checks["redis"] = check(shared.Ping) // shared limits (REDIS_URL); down: counted per process
	}
	status, code := "ok", fiber.StatusOK
	for _, st := range checks {
		if st.Status != "up" {
			status = "degraded"
		}
	}
	if checks["postgres"].Status != "up" {
		status, code = "down", fiber.StatusServiceUnavailable
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(code).JSON(fiber.Map{"status": status, "checks": checks})
}

func (s *Server) metricsHandler() fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
}

func (s *Server) jwks(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "application/jwk-set+json")
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	return c.Send(s.Keys.JWKS())
}

type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "valuecase_http_requests_total", Help: "HTTP requests by method, route template and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "valuecase_http_request_duration_seconds", Help: "HTTP request latency by method and route template.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"method", "route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *httpMetrics) observe(method, route string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(elapsed.Seconds())
}

type syncWorkersJSON struct {
	Status          string  `json:"status"` // up: pollers on the sync task queue; down: none, or Temporal unreachable
	WorkflowPollers int     `json:"workflow_pollers"`
	ActivityPollers int     `json:"activity_pollers"`
	LatencyMS       float64 `json:"latency_ms"`
}

type providerHealthJSON struct {
	Provider            string  `json:"provider"`
	ActiveIntegrations  int64   `json:"active_integrations"`
	IntegrationsInError int64   `json:"integrations_in_error"`
	OpenSyncs           int64   `json:"open_syncs"`
	LastSyncStatus      *string `json:"last_sync_status"`
	LastSyncFinishedAt  *string `json:"last_sync_finished_at"`
}

// ingestionHealth is the syncs' health: PostgreSQL, Temporal and workers polling the sync task
// queue (without them no sync runs: 503), then per provider the last sync's outcome and the
// integrations in error, whose schedules stay paused until fixed ("degraded"). Aggregates only:
// no tenant, id or name (the endpoint is unauthenticated like /health).
func (s *Server) ingestionHealth(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	status, code := "ok", fiber.StatusOK
	down := func() { status, code = "down", fiber.StatusServiceUnavailable }

	pg := dependencyState{Status: "up"}
	start := time.Now()
	rows, err := db.Q.IngestionHealth(ctx, s.Pool)
	pg.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		pg.Status, pg.Error = "down", "unreachable"
		s.log.WarnContext(ctx, "ingestion health: database", "request_id", requestID(c), "error", err)
		down()
	}
	tq := dependencyState{Status: "down", Error: "not configured"}
	workers := syncWorkersJSON{Status: "down"}
	if s.Temporal != nil {
		start = time.Now()
		_, err := s.Temporal.CheckHealth(ctx, nil)
		tq = dependencyState{Status: "up", LatencyMS: float64(time.Since(start).Microseconds()) / 1000}
		if err != nil {
			tq.Status, tq.Error = "down", "unreachable"
		} else {
			start = time.Now()
			wf, werr := s.Temporal.DescribeTaskQueue(ctx, integration.TaskQueue, enums.TASK_QUEUE_TYPE_WORKFLOW)
			act, aerr := s.Temporal.DescribeTaskQueue(ctx, integration.TaskQueue, enums.TASK_QUEUE_TYPE_ACTIVITY)
			workers.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
			if werr == nil && aerr == nil {
				workers.WorkflowPollers, workers.ActivityPollers = len(wf.GetPollers()), len(act.GetPollers())
				if workers.WorkflowPollers > 0 && workers.ActivityPollers > 0 {
					workers.Status = "up"
				}
			}
		}
	}
	if tq.Status != "up" || workers.Status != "up" {
		down()
	}
	providers := make([]providerHealthJSON, 0, len(rows))
	var inError int64
	for _, r := range rows {
		p := providerHealthJSON{Provider: r.Provider, ActiveIntegrations: r.Active, IntegrationsInError: r.InError, OpenSyncs: r.OpenSyncs}
		if r.LastStatus != "" {
			p.LastSyncStatus, p.LastSyncFinishedAt = &r.LastStatus, new(wire.Timestamp(r.LastFinishedAt))
		}
		inError += r.InError
		providers = append(providers, p)
	}
	if inError > 0 && code == fiber.StatusOK {
		status = "degraded"
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(code).JSON(fiber.Map{
		"status":    status,
		"checks":    fiber.Map{"postgres": pg, "temporal": tq, "sync_workers": workers},
		"providers": providers, "schedules_in_error": inError,
	})
}
