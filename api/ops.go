package api

import (
	"context"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
