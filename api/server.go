// Package api is the HTTP interface: the Fiber app, its middleware and one
// file per resource group. Handlers stay thin; rules live in internal/ packages.
package api

import (
	_ "embed"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/ratelimit"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
)

//go:embed openapi.yaml
var OpenAPISpec []byte

// MaxBodyBytes is the request payload limit (spec section 8).
const MaxBodyBytes = 5 << 20

// Deps are what the API needs from the process that runs it.
type Deps struct {
	Config      config.Config
	Pool        *pgxpool.Pool
	Keys        *auth.KeyStore
	Verifier    *auth.Verifier
	Limits      ratelimit.Store
	Concurrency ratelimit.ConcurrencyLimiter
	Temporal    client.Client // for /health only; may be nil
	Registry    *prometheus.Registry
	Log         *slog.Logger
	// Webhooks seals webhook secrets and makes test and redelivery attempts;
	// built from Config (SECRETS_KEY, OUTBOUND_ALLOW_PRIVATE_NETWORKS) when nil.
	Webhooks *dispatch.Dispatcher
}

// Server is the HTTP API.
type Server struct {
	Deps
	app     *fiber.App
	log     *slog.Logger
	tenants *tenantCache
	metrics *httpMetrics
}

// New builds the app with every route.
func New(d Deps) *Server {
	s := &Server{Deps: d, log: d.Log, tenants: newTenantCache(d.Pool, 30*time.Second)}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.Registry == nil {
		s.Registry = prometheus.NewRegistry()
	}
	s.metrics = newHTTPMetrics(s.Registry)
	if s.Webhooks == nil {
		w, err := dispatch.New(d.Config, d.Pool, s.log)
		if err != nil {
			panic(err) // only a bad SECRETS_KEY, which config.Load already refuses at start
		}
		s.Webhooks = w
	}
	s.app = fiber.New(fiber.Config{
		AppName:               "valuecase",
		BodyLimit:             MaxBodyBytes, // POST /v1/bulk/import: bulk.MaxBodyBytes (bulkBodyLimit, edge.go)
		ReadBufferSize:        16 << 10,     // request line + headers: room for large identity-provider tokens
		ErrorHandler:          s.errorHandler,
		DisableStartupMessage: true,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          90 * time.Second,
		IdleTimeout:           120 * time.Second,
	})
	s.routes()
	s.installEdge() // parser refusals and unknown methods (edge.go)
	return s
}

// App exposes the Fiber app (for Listen and for tests' app.Test).
func (s *Server) App() *fiber.App { return s.app }

func (s *Server) routes() {
	app := s.app
	app.Use(s.requestID, s.observe, s.recover, s.cors)

	app.Get("/health", s.health)
	app.Get("/metrics", s.metricsHandler())
	api1 := app.Group("/api/v1")  // the spec's component paths (section 4, operational endpoints)
	api1.Get("/health", s.health) // alias of /health
	api1.Get("/ingestion/health", s.ingestionHealth)
	s.agentsRoutes(api1) // the workflow view (agents.go)
	app.Get("/.well-known/jwks.json", s.jwks)
	mountDocs(app, OpenAPISpec)
	s.authRoutes(app) // POST /v1/auth/token and /v1/auth/refresh: no bearer token, no X-Tenant-ID (authtoken.go)

	v1 := app.Group("/v1", s.authenticate, s.tenant, s.rateLimit, s.tenantTx, s.idempotency)

	v1.Get("/initiatives", s.require(rbac.InitiativesRead), s.listInitiatives)
	v1.Post("/initiatives", s.require(rbac.InitiativesWrite), s.createInitiative)
	v1.Get("/initiatives/:id", s.require(rbac.InitiativesRead), s.getInitiative)
	v1.Put("/initiatives/:id", s.require(rbac.InitiativesWrite), s.replaceInitiative)
	v1.Patch("/initiatives/:id", s.require(rbac.InitiativesWrite), s.patchInitiative)
	v1.Delete("/initiatives/:id", s.require(rbac.InitiativesDelete), s.archiveInitiative)
	v1.Post("/initiatives/:id/status", s.require(rbac.InitiativesWrite), s.changeInitiativeStatus)
	v1.Get("/initiatives/:id/status-history", s.require(rbac.InitiativesRead), s.initiativeStatusHistory)
	v1.Get("/initiatives/:id/projects", s.require(rbac.InitiativesRead), s.listProjects)
	v1.Post("/initiatives/:id/projects", s.require(rbac.InitiativesWrite), s.createProject)

	s.identityRoutes(v1) // users, roles, API keys, service clients (identity.go)
	s.costsRoutes(v1)    // costs of an initiative (costs.go)
	s.benefitsRoutes(v1) // benefits, actuals and variance (benefits.go)
	s.settingsRoutes(v1) // tenant settings and FX rates (settings.go)

	s.stakeholdersRoutes(v1)  // stakeholders and their engagements (stakeholders.go)
	s.analyticsRoutes(v1)     // ROI analysis (analytics.go)
	s.dashboardsRoutes(v1)    // saved dashboards and the portfolio dashboard (dashboards.go)
	s.businessCasesRoutes(v1) // business cases, approval and versions (businesscases.go)
	s.exportsRoutes(v1)       // business-case exports (exports.go)
	s.bulkRoutes(v1)          // bulk import, export and jobs (bulk.go)
	s.integrationsRoutes(v1)  // integrations, their syncs and sync history (integrations.go)
	s.auditRoutes(v1)         // the audit log (audit.go)

	v1.Get("/webhooks", s.require(rbac.WebhooksManage), s.listWebhooks)
	v1.Post("/webhooks", s.require(rbac.WebhooksManage), s.createWebhook)
	v1.Get("/webhooks/:id", s.require(rbac.WebhooksManage), s.getWebhook)
	v1.Put("/webhooks/:id", s.require(rbac.WebhooksManage), s.replaceWebhook)
	v1.Patch("/webhooks/:id", s.require(rbac.WebhooksManage), s.patchWebhook)
	v1.Delete("/webhooks/:id", s.require(rbac.WebhooksManage), s.deleteWebhook)
	v1.Get("/webhooks/:id/deliveries", s.require(rbac.WebhooksManage), s.listDeliveries)
	v1.Get("/webhooks/:id/deliveries/:delivery_id", s.require(rbac.WebhooksManage), s.getDelivery)
	v1.Post("/webhooks/:id/test", s.require(rbac.WebhooksManage), s.testWebhook)
	v1.Post("/webhooks/:id/deliveries/:delivery_id/redeliver", s.require(rbac.WebhooksManage), s.redeliverDelivery)
}
