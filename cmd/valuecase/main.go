// Command valuecase is the one binary of the service; each process runs one role.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/analytics"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/internal/ratelimit"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/telemetry"
	"github.com/valuecase/valuecase/worker"
)

const usage = `valuecase: value-case management service

Usage:
  valuecase api                 serve the REST API on HTTP_ADDR
  valuecase worker              run Temporal workers and the outbox relay
  valuecase migrate             apply database migrations
  valuecase tenant create ...   onboard a tenant (prints {"id":"..."})
  valuecase tenant list         list tenants as JSON lines
  valuecase token ...           mint an access token signed by the service's key (development, scripts)
  valuecase keys rotate|list|prune   manage the service's token signing keys (AUTH_SIGNING_KEYS_DIR)
  valuecase demo seed ...       seed the demo portfolio into a tenant through the running API (once)
  valuecase benchmarks import FILE.csv   load an operator peer dataset for /v1/analytics/benchmarks

Configuration comes from environment variables (see README). Run 'valuecase COMMAND --help' for flags.
`

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "api":
		err = runAPI(ctx, args)
	case "worker":
		err = runWorker(ctx, args)
	case "migrate":
		err = runMigrate(ctx, args)
	case "tenant":
		err = runTenant(ctx, args)
	case "token":
		err = runToken(args)
	case "keys":
		err = runKeys(args)
	case "demo":
		err = runDemo(ctx, args)
	case "benchmarks":
		err = runBenchmarks(ctx, args)
	default:
		fmt.Fprintf(os.Stderr, "valuecase: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "valuecase:", err)
		os.Exit(1)
	}
}

func flags(name, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: valuecase %s\n\n%s\n", name, help)
		fs.PrintDefaults()
	}
	return fs
}

func loadConfig() (config.Config, error) {
	cfg, err := config.Load()
	if err != nil {
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

func runAPI(ctx context.Context, args []string) error {
	if err := flags("api", "Serves the REST API on HTTP_ADDR until SIGINT/SIGTERM.").Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	log := telemetry.NewLogger(cfg.LogLevel)
	pool, err := db.NewPool(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	keys, err := auth.LoadKeyStore(cfg.AuthSigningKeysDir)
	if err != nil {
		return err
	}
	keys.ActivationDelay = auth.KeyActivationDelay
	go reloadKeys(ctx, keys, log) // picks up `valuecase keys rotate|prune` (keys.go)
	verifier, err := auth.NewVerifier(ctx, keys, auth.VerifierOptions{JWKSURLs: cfg.AuthJWKSURLs, Issuer: cfg.AuthIssuer, Audience: cfg.AuthAudience})
	if err != nil {
		return err
	}
	reg := telemetry.NewRegistry()
	telemetry.RegisterPool(reg, pool)
	metrics, closer := telemetry.TemporalMetrics(reg)
	defer closer.Close()
	tc, err := worker.DialTemporal(cfg, log, metrics)
	if err != nil {
		return err
	}
	defer tc.Close()
	deps := api.Deps{
		Config: cfg, Pool: pool, Keys: keys, Verifier: verifier, Temporal: tc, Registry: reg, Log: log,
		Limits: ratelimit.NewMemory(nil), Concurrency: ratelimit.NewMemoryConcurrency(),
	}
	if cfg.RedisURL != "" {
		// Limits shared by every instance; in process while Redis is unreachable.
		shared, err := ratelimit.NewRedis(cfg.RedisURL, log)
		if err != nil {
			return fmt.Errorf("REDIS_URL: %w", err)
		}
		defer shared.Close()
		deps.Limits, deps.Concurrency = shared, shared
		log.Info("rate limits shared through Redis")
	}
	analytics.SetCacheBytes(int64(cfg.AnalyticsCacheMB) << 20)
	srv := api.New(deps)
	errc := make(chan error, 1)
	go func() { errc <- srv.App().Listen(cfg.HTTPAddr) }()
	log.Info("api listening", "addr", cfg.HTTPAddr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("api shutting down")
	return srv.App().ShutdownWithTimeout(30 * time.Second)
}

func runWorker(ctx context.Context, args []string) error {
	if err := flags("worker", "Runs the Temporal workers and the outbox relay until SIGINT/SIGTERM; serves /health and /metrics on WORKER_HTTP_ADDR.").Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	log := telemetry.NewLogger(cfg.LogLevel)
	pool, err := db.NewPool(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	reg := telemetry.NewRegistry()
	telemetry.RegisterPool(reg, pool)
	metrics, closer := telemetry.TemporalMetrics(reg)
	defer closer.Close()
	tc, err := worker.DialTemporal(cfg, log, metrics)
	if err != nil {
		return err
	}
	defer tc.Close()

	ops := fiber.New(fiber.Config{DisableStartupMessage: true})
	ops.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	ops.Get("/health", func(c *fiber.Ctx) error {
		pctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
		defer cancel()
		if err := pool.Ping(pctx); err != nil {
			return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{"status": "down", "checks": fiber.Map{"postgres": fiber.Map{"status": "down"}}})
		}
		return c.JSON(fiber.Map{"status": "ok", "checks": fiber.Map{"postgres": fiber.Map{"status": "up"}}})
	})
	go func() {
		if err := ops.Listen(cfg.WorkerHTTPAddr); err != nil {
			log.Error("worker ops endpoint", "error", err)
		}
	}()
	defer func() {
		if err := ops.Shutdown(); err != nil {
			log.Error("worker ops endpoint shutdown", "error", err)
		}
	}()

	w := &worker.Worker{Config: cfg, Pool: pool, Temporal: tc, Log: log}
	return w.Run(ctx)
}

func runMigrate(ctx context.Context, args []string) error {
	if err := flags("migrate", "Applies pending database migrations to DATABASE_URL.").Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	return db.Migrate(ctx, cfg.DatabaseURL)
}

type tenantJSON struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	Plan              string `json:"plan"`
	RequestsPerMinute *int32 `json:"requests_per_minute,omitempty"`
	Burst             *int32 `json:"burst,omitempty"`
	MaxConcurrent     *int32 `json:"max_concurrent,omitempty"`
	CreatedAt         string `json:"created_at"`
}

func runTenant(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "list") {
		fmt.Fprintln(os.Stderr, "Usage: valuecase tenant create --name NAME --plan PLAN [--requests-per-minute N --burst N --concurrent N]\n       valuecase tenant list")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("tenant needs create or list")
	}
	var (
		fs               = flags("tenant "+args[0], "create: onboard a tenant and print {\"id\":\"...\"}; list: print every tenant as a JSON line.")
		name             = fs.String("name", "", "tenant (organization) name, 1-200 characters")
		plan             = fs.String("plan", "starter", "starter, professional, enterprise or enterprise_plus")
		rpm, burst, conc = fs.Int("requests-per-minute", 0, "enterprise_plus: negotiated requests per minute"), fs.Int("burst", 0, "enterprise_plus: negotiated burst"), fs.Int("concurrent", 0, "enterprise_plus: negotiated concurrent requests")
	)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	pool, err := db.NewPool(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	enc := json.NewEncoder(os.Stdout)
	if args[0] == "list" {
		tenants, err := db.Q.TenantList(ctx, pool)
		if err != nil {
			return err
		}
		for _, t := range tenants {
			_ = enc.Encode(tenantJSON{ID: t.ID.String(), Name: t.Name, Plan: t.Plan, RequestsPerMinute: t.RequestsPerMinute, Burst: t.Burst, MaxConcurrent: t.MaxConcurrent, CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339)})
		}
		return nil
	}
	params, err := tenantParams(*name, *plan, *rpm, *burst, *conc)
	if err != nil {
		return err
	}
	t, err := db.Q.TenantCreate(ctx, pool, params)
	if err != nil {
		return err
	}
	return enc.Encode(map[string]string{"id": t.ID.String()})
}

// tenantParams validates the onboarding flags.
func tenantParams(name, plan string, rpm, burst, conc int) (dbsqlc.TenantCreateParams, error) {
	name = strings.TrimSpace(name)
	if name == "" || len([]rune(name)) > 200 {
		return dbsqlc.TenantCreateParams{}, errors.New("--name is required (1-200 characters)")
	}
	p, err := ratelimit.ParsePlan(plan)
	if err != nil {
		return dbsqlc.TenantCreateParams{}, fmt.Errorf("--plan: %w", err)
	}
	params := dbsqlc.TenantCreateParams{Name: name, Plan: string(p)}
	negotiated := rpm != 0 || burst != 0 || conc != 0
	if p != ratelimit.PlanEnterprisePlus {
		if negotiated {
			return params, errors.New("--requests-per-minute, --burst and --concurrent are only for --plan enterprise_plus")
		}
		return params, nil
	}
	if rpm <= 0 || burst <= 0 || conc <= 0 {
		return params, errors.New("--plan enterprise_plus needs positive --requests-per-minute, --burst and --concurrent")
	}
	r, b, c := int32(rpm), int32(burst), int32(conc)
	params.RequestsPerMinute, params.Burst, params.MaxConcurrent = &r, &b, &c
	return params, nil
}

func runToken(args []string) error {
	fs := flags("token", "Mints an access token signed by the service's newest key (AUTH_SIGNING_KEYS_DIR).")
	tenant := fs.String("tenant", "", "tenant id (org_id claim); required")
	sub := fs.String("sub", "demo-admin", "subject (sub claim)")
	roles := fs.String("roles", rbac.RoleAdmin, "comma-separated roles")
	perms := fs.String("permissions", strings.Join(rbac.Names(), ","), "comma-separated permissions")
	email := fs.String("email", "", "email claim")
	name := fs.String("name", "", "name claim")
	ttl := fs.Duration("ttl", time.Hour, "lifetime")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tenant == "" {
		return errors.New("--tenant is required")
	}
	if *ttl <= 0 || *ttl > 30*24*time.Hour {
		return errors.New("--ttl must be between 1s and 720h")
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	keys, err := auth.LoadKeyStore(cfg.AuthSigningKeysDir)
	if err != nil {
		return err
	}
	keys.ActivationDelay = auth.KeyActivationDelay
	tok, err := keys.Mint(auth.MintOptions{Subject: *sub, TenantID: *tenant, Email: *email, Name: *name, Roles: splitList(*roles), Permissions: splitList(*perms), TTL: *ttl})
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
