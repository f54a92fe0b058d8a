// Package config reads the service configuration from environment variables.
// Every variable has a default that works for local development; a bad value
// fails at start with a message naming the variable.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/valuecase/valuecase/internal/secretbox"
)

// Config is the whole configuration of every role of the binary.
type Config struct {
	HTTPAddr                     string
	WorkerHTTPAddr               string
	DatabaseURL                  string
	TemporalAddress              string
	TemporalNamespace            string
	AuthJWKSURLs                 []string
	AuthIssuer                   string
	AuthAudience                 string
	AuthSigningKeysDir           string
	OutboundAllowPrivateNetworks bool
	CORSAllowedOrigins           []string
	LogLevel                     slog.Level
	ReviewReminderAfter          time.Duration
	BusinessCaseRemindAfter      time.Duration
	BusinessCaseEscalateAfter    time.Duration
	ExportRetention              time.Duration
	WorkflowsTimeout             time.Duration // deadline of Temporal's answer to /api/v1/agents/workflows
	WebhookRetryDelays           []time.Duration
	SecretsKey                   string
	RedisURL                     string
	TrustedProxies               []netip.Prefix
	RetentionEvery               time.Duration
	RetentionOutbox              time.Duration
	RetentionWebhookDeliveries   time.Duration
	RetentionSessions            time.Duration
	RetentionAuditEvents         time.Duration
	// AnalyticsTimeout is the deadline of one analytics request (0 in a
	// Config built by hand: DefaultAnalyticsTimeout).
	AnalyticsTimeout time.Duration
	// AnalyticsCacheMB bounds the API process's cache of analysed reports,
	// in MiB (0: none); cmd/valuecase applies it.
	AnalyticsCacheMB int
}

// DefaultRetentionEvery is RETENTION_EVERY's default (and the interval a
// Config built by hand, with 0, gets).
const DefaultRetentionEvery = time.Hour

// DefaultAnalyticsTimeout is ANALYTICS_TIMEOUT's default.
const DefaultAnalyticsTimeout = 5 * time.Second

// Var describes one environment variable, for the loader and for documentation.
type Var struct {
	Name, Default, Meaning string
}

// Vars lists every variable the service reads, with its default.
var Vars = []Var{
	{"HTTP_ADDR", "127.0.0.1:8080", "address the API listens on"},
	{"WORKER_HTTP_ADDR", "127.0.0.1:8081", "address of the worker's /health and /metrics"},
	{"DATABASE_URL", "postgres://valuecase:valuecase@127.0.0.1:5432/valuecase?sslmode=disable", "PostgreSQL connection (a role that is neither superuser nor BYPASSRLS)"},
	{"TEMPORAL_ADDRESS", "127.0.0.1:7233", "Temporal frontend host:port"},
	{"TEMPORAL_NAMESPACE", "default", "Temporal namespace"},
	{"AUTH_JWKS_URLS", "", "comma-separated JWKS URLs of external identity providers"},
	{"AUTH_ISSUER", "", "required `iss` of external tokens (checked when set)"},
	{"AUTH_AUDIENCE", "", "required `aud` of external tokens (checked when set)"},
	{"AUTH_SIGNING_KEYS_DIR", ".data/keys", "directory of the service's own Ed25519 signing keys (PEM); created with one key when empty"},
	{"OUTBOUND_ALLOW_PRIVATE_NETWORKS", "false", "allow outbound calls (webhooks, integrations) to loopback/private/link-local addresses"},
	{"CORS_ALLOWED_ORIGINS", "", "comma-separated origins that get CORS headers"},
	{"LOG_LEVEL", "info", "debug, info, warn or error"},
	{"REVIEW_REMINDER_AFTER", "72h", "how long an initiative may wait in review before the review workflow sends a reminder"},
	{"BUSINESS_CASE_REMIND_AFTER", "48h", "how long a business case may wait for approval before each reminder to the approvers"},
	{"BUSINESS_CASE_ESCALATE_AFTER", "120h", "how long after submission an undecided business case is escalated (once)"},
	{"EXPORT_RETENTION", "168h", "how long a rendered business-case export is downloadable (then purged)"},
	{"WORKFLOWS_TIMEOUT", "3s", "how long /api/v1/agents/workflows waits on Temporal (visibility, describe, history); past it: 503 SERVICE_UNAVAILABLE"},
	{"WEBHOOK_RETRY_DELAYS", "5m,25m", "delays before webhook delivery attempts 2, 3, ..."},
	{"SECRETS_KEY", "", "base64 32-byte key encrypting secrets at rest (required outside local development)"},
	{"REDIS_URL", "", "redis:// or rediss:// URL: rate and concurrency limits shared by every API instance (empty: each process counts alone)"},
	{"ANALYTICS_TIMEOUT", "5s", "deadline of one /v1/analytics request (statement_timeout of its transaction too); past it: 503 SERVICE_UNAVAILABLE"},
	{"ANALYTICS_CACHE_MB", "32", "MiB of analysed reports the API keeps per tenant data version (realization, trends, ROI, forecasts; exact: a change of any input is a new version), least recently used dropped first; 0 turns the cache off"},
	{"TRUSTED_PROXIES", "", "comma-separated CIDRs (or IPs) of reverse proxies whose X-Forwarded-For names the client IP"},
	{"RETENTION_EVERY", "1h", "how often the maintenance/retention schedule removes rows past their retention"},
	{"RETENTION_OUTBOX", "168h", "how long a published outbox event is kept"},
	{"RETENTION_WEBHOOK_DELIVERIES", "720h", "how long a delivered or failed webhook delivery (and its attempts) is kept after its last change"},
	{"RETENTION_SESSIONS", "168h", "how long a session or refresh token is kept after it expired or ended"},
	{"RETENTION_AUDIT_EVENTS", "9600h", "how long an audit event is kept (400 days; at least 2160h, 90 days)"},
}

func get(name string) string {
	if v, ok := os.LookupEnv(name); ok {
		return strings.TrimSpace(v)
	}
	for _, v := range Vars {
		if v.Name == name {
			return v.Default
		}
	}
	panic("config: undeclared variable " + name)
}

// Load reads and validates the environment.
func Load() (Config, error) {
	var errs []error
	bad := func(name string, err error) { errs = append(errs, fmt.Errorf("%s: %w", name, err)) }

	c := Config{
		HTTPAddr:           get("HTTP_ADDR"),
		WorkerHTTPAddr:     get("WORKER_HTTP_ADDR"),
		DatabaseURL:        get("DATABASE_URL"),
		TemporalAddress:    get("TEMPORAL_ADDRESS"),
		TemporalNamespace:  get("TEMPORAL_NAMESPACE"),
		AuthJWKSURLs:       list(get("AUTH_JWKS_URLS")),
		AuthIssuer:         get("AUTH_ISSUER"),
		AuthAudience:       get("AUTH_AUDIENCE"),
		AuthSigningKeysDir: get("AUTH_SIGNING_KEYS_DIR"),
		CORSAllowedOrigins: list(get("CORS_ALLOWED_ORIGINS")),
		SecretsKey:         get("SECRETS_KEY"),
		RedisURL:           get("REDIS_URL"),
	}
	for name, addr := range map[string]string{"HTTP_ADDR": c.HTTPAddr, "WORKER_HTTP_ADDR": c.WorkerHTTPAddr} {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			bad(name, errors.New("want host:port"))
		}
	}
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		bad("DATABASE_URL", errors.New("want a postgres:// URL"))
	}
	if _, _, err := net.SplitHostPort(c.TemporalAddress); err != nil {
		bad("TEMPORAL_ADDRESS", errors.New("want host:port"))
	}
	if c.TemporalNamespace == "" {
		bad("TEMPORAL_NAMESPACE", errors.New("must not be empty"))
	}
	for _, u := range c.AuthJWKSURLs {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			bad("AUTH_JWKS_URLS", fmt.Errorf("%q is not an absolute http(s) URL", u))
		}
	}
	if c.AuthSigningKeysDir == "" {
		bad("AUTH_SIGNING_KEYS_DIR", errors.New("must not be empty"))
	}
	for _, o := range c.CORSAllowedOrigins {
		if p, err := url.Parse(o); err != nil || p.Scheme == "" || p.Host == "" || p.Path != "" {
			bad("CORS_ALLOWED_ORIGINS", fmt.Errorf("%q is not an origin like https://app.example.com", o))
		}
	}
	var err error
	if c.OutboundAllowPrivateNetworks, err = strconv.ParseBool(get("OUTBOUND_ALLOW_PRIVATE_NETWORKS")); err != nil {
		bad("OUTBOUND_ALLOW_PRIVATE_NETWORKS", errors.New("want true or false"))
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("LOG_LEVEL"))); err != nil {
		bad("LOG_LEVEL", errors.New("want debug, info, warn or error"))
	}
	if c.ReviewReminderAfter, err = time.ParseDuration(get("REVIEW_REMINDER_AFTER")); err != nil || c.ReviewReminderAfter <= 0 {
		bad("REVIEW_REMINDER_AFTER", errors.New("want a positive duration such as 72h"))
	}
	if c.BusinessCaseRemindAfter, err = time.ParseDuration(get("BUSINESS_CASE_REMIND_AFTER")); err != nil || c.BusinessCaseRemindAfter <= 0 {
		bad("BUSINESS_CASE_REMIND_AFTER", errors.New("want a positive duration such as 48h"))
	}
	if c.BusinessCaseEscalateAfter, err = time.ParseDuration(get("BUSINESS_CASE_ESCALATE_AFTER")); err != nil || c.BusinessCaseEscalateAfter <= 0 {
		bad("BUSINESS_CASE_ESCALATE_AFTER", errors.New("want a positive duration such as 120h"))
	}
	for _, r := range []struct {
		name string
		dst  *time.Duration
		min  time.Duration
	}{
		{"RETENTION_EVERY", &c.RetentionEvery, time.Minute},
		{"RETENTION_OUTBOX", &c.RetentionOutbox, time.Hour},
		{"RETENTION_WEBHOOK_DELIVERIES", &c.RetentionWebhookDeliveries, time.Hour},
		{"RETENTION_SESSIONS", &c.RetentionSessions, time.Hour},
		{"RETENTION_AUDIT_EVENTS", &c.RetentionAuditEvents, 90 * 24 * time.Hour},
	} {
		if *r.dst, err = time.ParseDuration(get(r.name)); err != nil || *r.dst < r.min {
			bad(r.name, fmt.Errorf("want a duration of at least %s", r.min))
		}
	}
	if c.ExportRetention, err = time.ParseDuration(get("EXPORT_RETENTION")); err != nil || c.ExportRetention <= 0 {
		bad("EXPORT_RETENTION", errors.New("want a positive duration such as 168h"))
	}
	if c.WorkflowsTimeout, err = time.ParseDuration(get("WORKFLOWS_TIMEOUT")); err != nil || c.WorkflowsTimeout < 100*time.Millisecond || c.WorkflowsTimeout > time.Minute {
		bad("WORKFLOWS_TIMEOUT", errors.New("want a duration from 100ms to 1m such as 3s"))
	}
	if c.WebhookRetryDelays, err = ParseDelays(get("WEBHOOK_RETRY_DELAYS")); err != nil {
		bad("WEBHOOK_RETRY_DELAYS", err)
	}
	if _, err := secretbox.New(c.SecretsKey); err != nil {
		bad("SECRETS_KEY", errors.New("want the base64 encoding of 32 random bytes (openssl rand -base64 32)"))
	}
	if c.RedisURL != "" {
		if u, err := url.Parse(c.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Hostname() == "" {
			bad("REDIS_URL", errors.New("want a redis:// or rediss:// URL such as redis://127.0.0.1:6379/0"))
		} else if _, err := redis.ParseURL(c.RedisURL); err != nil {
			bad("REDIS_URL", err)
		}
	}
	if c.AnalyticsTimeout, err = time.ParseDuration(get("ANALYTICS_TIMEOUT")); err != nil || c.AnalyticsTimeout < 100*time.Millisecond || c.AnalyticsTimeout > time.Minute {
		bad("ANALYTICS_TIMEOUT", errors.New("want a duration from 100ms to 1m such as 5s"))
	}
	if c.AnalyticsCacheMB, err = strconv.Atoi(get("ANALYTICS_CACHE_MB")); err != nil || c.AnalyticsCacheMB < 0 || c.AnalyticsCacheMB > 4096 {
		bad("ANALYTICS_CACHE_MB", errors.New("want a whole number of MiB from 0 to 4096"))
	}
	for _, p := range list(get("TRUSTED_PROXIES")) {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				bad("TRUSTED_PROXIES", fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8 or an IP", p))
				continue
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		c.TrustedProxies = append(c.TrustedProxies, prefix.Masked())
	}
	return c, errors.Join(errs...)
}

// ParseDelays parses a comma-separated list of positive durations (1 to 10 of them).
func ParseDelays(s string) ([]time.Duration, error) {
	parts := list(s)
	if len(parts) == 0 || len(parts) > 10 {
		return nil, errors.New("want 1 to 10 comma-separated durations such as 5m,25m")
	}
	out := make([]time.Duration, 0, len(parts))
	for _, p := range parts {
		d, err := time.ParseDuration(p)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%q is not a positive duration", p)
		}
		out = append(out, d)
	}
	return out, nil
}

func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
