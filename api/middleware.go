package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/valyala/fasthttp"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/credential"
	"github.com/valuecase/valuecase/internal/idempotency"
	"github.com/valuecase/valuecase/internal/ratelimit"
	"github.com/valuecase/valuecase/internal/rbac"
)

// Keys of the values a request carries through its handlers (Fiber Locals).
const (
	localRequestID = "request_id"
	localPrincipal = "principal"
	localTx        = "tx"
	localClaims    = "claims"  // *auth.Claims of a bearer token
	localTenant    = "tenant"  // *dbsqlc.Tenant of the caller
	localAPIKey    = "api_key" // credential.Parsed of an X-API-Key
)

// Principal is the authenticated caller of a tenant-scoped request. Its roles
// and permissions start as its credential's; admit completes them from the
// caller's record in the tenant (identity.go).
type Principal struct {
	Subject     string
	TenantID    uuid.UUID
	Email, Name string
	Auth        AuthInfo // how the caller authenticated (identity.go)

	roles     []string
	perms     rbac.Set
	admission func() error // completes the caller once and returns its refusal (expectCaller; nil: nothing to check)
}

// Has reports whether the caller holds a permission. The record only adds
// permissions to the credential's, so one the credential grants needs no
// admission yet: a refusal found later still answers the request (tenantTx).
func (p *Principal) Has(perm rbac.Permission) bool {
	if p.perms[perm] {
		return true
	}
	return p.admit() == nil && p.perms[perm]
}

// Roles are the caller's roles: its credential's and the tenant's stored ones.
func (p *Principal) Roles() []string {
	_ = p.admit() // refused: the request is answered with the refusal (tenantTx)
	return p.roles
}

// admit completes the admission of the caller (once) and returns its refusal, if any.
func (p *Principal) admit() error {
	if p.admission == nil {
		return nil
	}
	return p.admission()
}

func principal(c *fiber.Ctx) *Principal { return c.Locals(localPrincipal).(*Principal) }

// requestTx is the request's tenant-scoped transaction.
func requestTx(c *fiber.Ctx) pgx.Tx { return c.Locals(localTx).(pgx.Tx) }

// requestID is the request's correlation id. Requests refused before any
// middleware ran (a body over the limit) get one here.
func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	if id == "" {
		id = newRequestID(c)
	}
	return id
}

func newRequestID(c *fiber.Ctx) string {
	id := c.Get(fiber.HeaderXRequestID)
	if !validRequestID(id) {
		return freshRequestID(c)
	}
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)
	return id
}

// freshRequestID gives the request a generated id, ignoring the client's.
func freshRequestID(c *fiber.Ctx) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)
	return id
}

// requestID echoes a sane client X-Request-ID or makes one. Every response
// also says nosniff: a browser must take an export download, a CSV or an
// error body for its declared type, never sniff it into HTML or script.
func (s *Server) requestID(c *fiber.Ctx) error {
	newRequestID(c)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	return c.Next()
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if r < 0x20 || r > 0x7e { // printable ASCII, space included (as documented)
			return false
		}
	}
	return true
}

// recover turns a panic into a 500 with no internals in the body.
func (s *Server) recover(c *fiber.Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.ErrorContext(c.UserContext(), "panic", "request_id", requestID(c), "route", routeOf(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return c.Next()
}

func routeOf(c *fiber.Ctx) string {
	if r := c.Route(); r != nil && r.Path != "/" && r.Path != "" {
		return r.Path
	}
	return "unmatched"
}

// observe logs each request and records its metrics once the error handler has
// written the final status.
func (s *Server) observe(c *fiber.Ctx) error {
	start := time.Now()
	err := c.Next()
	if err != nil {
		if herr := s.app.ErrorHandler(c, err); herr != nil {
			return herr
		}
	}
	status := c.Response().StatusCode()
	route := routeOf(c)
	elapsed := time.Since(start)
	// Fiber's strings view buffers reused by the next request: copy what outlives this one.
	s.metrics.observe(strings.Clone(c.Method()), route, status, elapsed)
	if !s.log.Enabled(c.UserContext(), slog.LevelInfo) { // access log off: build none of its attributes
		return nil
	}
	attrs := []any{"request_id", requestID(c), "method", c.Method(), "route", route, "status", status, "duration_ms", float64(elapsed.Microseconds()) / 1000}
	if p, ok := c.Locals(localPrincipal).(*Principal); ok {
		attrs = append(attrs, "tenant_id", p.TenantID.String(), "subject", p.Subject)
	}
	s.log.InfoContext(c.UserContext(), "request", attrs...)
	return nil
}

// cors answers only origins in CORS_ALLOWED_ORIGINS; others get no CORS headers.
func (s *Server) cors(c *fiber.Ctx) error {
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" || !slices.Contains(s.Config.CORSAllowedOrigins, origin) {
		return c.Next()
	}
	c.Vary(fiber.HeaderOrigin)
	c.Set(fiber.HeaderAccessControlAllowOrigin, origin)
	c.Set(fiber.HeaderAccessControlExposeHeaders, "X-Request-ID, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Retry-After, Retry-After, Location, Deprecation, Link, Idempotent-Replayed, ETag")
	if c.Method() == fiber.MethodOptions && c.Get(fiber.HeaderAccessControlRequestMethod) != "" {
		c.Set(fiber.HeaderAccessControlAllowMethods, "GET, POST, PUT, PATCH, DELETE")
		c.Set(fiber.HeaderAccessControlAllowHeaders, "Authorization, Content-Type, X-Tenant-ID, X-Request-ID, X-API-Key, Idempotency-Key, If-Match, If-None-Match")
		c.Set(fiber.HeaderAccessControlMaxAge, "600")
		if strings.HasPrefix(c.Path(), "/v1/") {
			s.chargeClientIP(c) // every /v1 answer carries the rate-limit headers
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Next()
}

// bearerToken reads `Authorization: Bearer <token>`, exactly that form.
func bearerToken(c *fiber.Ctx) (string, bool) {
	h := c.Get(fiber.HeaderAuthorization)
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}

// authenticate verifies the bearer token; the claims wait in Locals for the tenant check.
func (s *Server) authenticate(c *fiber.Ctx) error {
	if key, ok := apiKeyPresented(c); ok {
		return s.authenticateAPIKey(c, key)
	}
	raw, ok := bearerToken(c)
	if !ok {
		return s.refuseAnonymous(c, Unauthorized("send Authorization: Bearer <access token>"))
	}
	claims, err := s.Verifier.Verify(c.UserContext(), raw)
	if err != nil {
		s.log.InfoContext(c.UserContext(), "token refused", "request_id", requestID(c), "reason", err.Error())
		return s.refuseAnonymous(c, Unauthorized("the access token is invalid or expired"))
	}
	c.Locals(localClaims, claims)
	return c.Next()
}

// tenant checks X-Tenant-ID against the token and that the tenant exists.
func (s *Server) tenant(c *fiber.Ctx) error {
	if key, ok := c.Locals(localAPIKey).(credential.Parsed); ok {
		return s.apiKeyTenant(c, key)
	}
	claims := c.Locals(localClaims).(*auth.Claims)
	header := c.Get("X-Tenant-ID")
	if header == "" {
		return s.refuseAnonymous(c, InvalidParameter("the X-Tenant-ID header is required"))
	}
	tenantID, err := uuid.Parse(header)
	if err != nil || claims.OrgID != header {
		return s.refuseAnonymous(c, Forbidden("the token is not valid for the tenant named in X-Tenant-ID"))
	}
	t, err := s.tenants.get(c.UserContext(), tenantID)
	if err != nil {
		return err
	}
	if t == nil {
		return s.refuseAnonymous(c, Forbidden("the token is not valid for the tenant named in X-Tenant-ID"))
	}
	c.Locals(localPrincipal, principalFromClaims(claims, tenantID))
	c.Locals(localTenant, t)
	return c.Next()
}

// anonymousLimit bounds requests refused before a tenant is known, per client IP.
var anonymousLimit = ratelimit.Limit{PerMinute: 300, Burst: 60}

// refuseAnonymous answers a request refused before its tenant is known; it
// still counts against (and reports) the client IP's allowance.
func (s *Server) refuseAnonymous(c *fiber.Ctx, refusal error) error {
	if res, ok := s.chargeClientIP(c); ok && !res.Allowed {
		return rateLimited(c, res)
	}
	return refusal
}

// chargeClientIP counts a request against the client IP's allowance and sets
// the rate-limit headers from it.
func (s *Server) chargeClientIP(c *fiber.Ctx) (ratelimit.Result, bool) {
	res, err := s.Limits.Allow(c.UserContext(), "ip:"+s.clientIP(c), anonymousLimit)
	if err != nil {
		return res, false
	}
	setRateHeaders(c, res)
	return res, true
}

// rateLimit applies the tenant's plan limits, the per-endpoint limits and the
// concurrency cap. Headers report the most constrained limit that applied.
func (s *Server) rateLimit(c *fiber.Ctx) error {
	t := c.Locals(localTenant).(*dbsqlc.Tenant)
	limit, concurrent := planLimits(t)
	key := "tenant:" + t.ID.String()
	res, err := s.Limits.Allow(c.UserContext(), key, limit)
	if err != nil {
		return err
	}
	shown := res
	if res.Allowed && t.Plan != string(ratelimit.PlanEnterprisePlus) {
		if name, el, ok := ratelimit.EndpointLimit(c.Method(), c.Path()); ok {
			eres, err := s.Limits.Allow(c.UserContext(), key+":"+name, el)
			if err != nil {
				return err
			}
			if !eres.Allowed || eres.Remaining < shown.Remaining {
				shown = eres
			}
		}
	}
	setRateHeaders(c, shown)
	if !shown.Allowed {
		return rateLimited(c, shown)
	}
	release, ok, err := s.Concurrency.Acquire(c.UserContext(), key, concurrent)
	if err != nil {
		return err
	}
	if !ok {
		c.Set(fiber.HeaderRetryAfter, "1")
		c.Set("X-RateLimit-Retry-After", "1")
		return &Error{Status: fiber.StatusTooManyRequests, Code: CodeRateLimited, Message: fmt.Sprintf("too many concurrent requests for this tenant (limit %d)", concurrent)}
	}
	defer release()
	return c.Next()
}

func planLimits(t *dbsqlc.Tenant) (ratelimit.Limit, int) {
	if t.Plan == string(ratelimit.PlanEnterprisePlus) {
		return ratelimit.Limit{PerMinute: int(*t.RequestsPerMinute), Burst: int(*t.Burst)}, int(*t.MaxConcurrent)
	}
	l, conc, _ := ratelimit.PlanLimits(ratelimit.Plan(t.Plan))
	return l, conc
}

func setRateHeaders(c *fiber.Ctx, r ratelimit.Result) {
	c.Set("X-RateLimit-Limit", strconv.Itoa(r.Limit.PerMinute))
	c.Set("X-RateLimit-Remaining", strconv.Itoa(r.Remaining))
	c.Set("X-RateLimit-Reset", strconv.FormatInt(r.ResetUnix(time.Now()), 10))
	c.Set("X-RateLimit-Retry-After", strconv.FormatInt(r.RetryAfterSeconds(), 10))
}

func rateLimited(c *fiber.Ctx, r ratelimit.Result) error {
	c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(r.RetryAfterSeconds(), 10))
	return &Error{Status: fiber.StatusTooManyRequests, Code: CodeRateLimited,
		Message: fmt.Sprintf("rate limit of %d requests per minute exceeded; retry in %d s", r.Limit.PerMinute, r.RetryAfterSeconds())}
}

// tenantTx opens the request's tenant-scoped transaction, provisions the user
// on first sight and refuses deactivated users. It commits when the handler
// succeeds and rolls back otherwise.
func (s *Server) tenantTx(c *fiber.Ctx) error {
	p := principal(c)
	// Every tenant transaction of the request (this one, and any a handler
	// opens after endTx) records its writes in the audit log as p's, with the request id.
	ctx := db.WithActor(c.UserContext(), p.Subject, requestID(c))
	c.SetUserContext(ctx)
	// The BEGIN and tenant setting go with the caller's query below: one round trip for the three.
	// A read runs each batch as an implicit transaction instead: no BEGIN and no COMMIT at all.
	var tx pgx.Tx
	reads := c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead
	if reads {
		tx = db.BeginTenantReads(ctx, s.Pool, p.TenantID)
	} else {
		tx = db.BeginTenantDeferred(ctx, s.Pool, p.TenantID)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()

	// One query: the user (or service client), its status and the permission union (identity.go).
	// A read's goes with its first statement; a write's is answered before the handler writes.
	s.expectCaller(ctx, tx, p)
	if !reads {
		if err := p.admit(); err != nil {
			return err
		}
	}
	c.Locals(localTx, tx)
	// The headers before the handler's, for a read answered before its caller was admitted.
	answered := headerSnapshots.Get().(*fasthttp.ResponseHeader)
	defer headerSnapshots.Put(answered)
	c.Response().Header.CopyTo(answered)
	err := c.Next()
	if refusal := p.admit(); refusal != nil {
		// Nothing of the handler's answer goes out.
		answered.CopyTo(&c.Response().Header)
		c.Response().ResetBody()
		return refusal
	}
	if err != nil {
		return err
	}
	if c.Locals(localTx) == nil || c.Response().StatusCode() >= 400 {
		return nil // ended early by the handler (endTx), or rolled back by the defer
	}
	return tx.Commit(ctx)
}

// headerSnapshots keeps tenantTx's copies of the response headers: a copy
// into a reused header allocates nothing.
var headerSnapshots = sync.Pool{New: func() any { return new(fasthttp.ResponseHeader) }}

// endTx commits the request's transaction before the handler goes on to wait
// on the outside world (a webhook receiver may take 30 s): an open transaction
// would hold a pooled connection all that time. The handler must not use requestTx(c) after it.
func endTx(c *fiber.Ctx) error {
	if err := principal(c).admit(); err != nil { // before the outside world hears of the request
		return err
	}
	tx := requestTx(c)
	c.Locals(localTx, nil)
	return tx.Commit(c.UserContext())
}

// require refuses callers without the permission.
func (s *Server) require(perm rbac.Permission) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !principal(c).Has(perm) {
			return Forbidden("missing permission %s", perm)
		}
		return c.Next()
	}
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// tenantCache keeps tenants briefly so rate limiting needs no query per request.
type tenantCache struct {
	pool *pgxpool.Pool
	ttl  time.Duration
	mu   sync.RWMutex
	m    map[uuid.UUID]cachedTenant
}

type cachedTenant struct {
	t       *dbsqlc.Tenant
	expires time.Time
}

func newTenantCache(pool *pgxpool.Pool, ttl time.Duration) *tenantCache {
	return &tenantCache{pool: pool, ttl: ttl, m: map[uuid.UUID]cachedTenant{}}
}

// get returns the tenant, or nil when it does not exist.
func (tc *tenantCache) get(ctx context.Context, id uuid.UUID) (*dbsqlc.Tenant, error) {
	tc.mu.RLock()
	e, ok := tc.m[id]
	tc.mu.RUnlock()
	if ok && time.Now().Before(e.expires) {
		return e.t, nil
	}
	t, err := db.Q.TenantGet(ctx, tc.pool, id)
	if db.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", db.ErrUnavailable, err)
	}
	tc.mu.Lock()
	if len(tc.m) > 100_000 { // bound memory: start over rather than grow without end
		tc.m = map[uuid.UUID]cachedTenant{}
	}
	tc.m[id] = cachedTenant{t: &t, expires: time.Now().Add(tc.ttl)}
	tc.mu.Unlock()
	return &t, nil
}

// clientIP is the caller's IP address: the direct peer, unless the peer is a
// trusted proxy (TRUSTED_PROXIES); then it is the right-most address in
// X-Forwarded-For that is not itself a trusted proxy (addresses further left
// were written by the client and may be forged). A malformed entry ends the
// walk at the last address trusted so far.
func (s *Server) clientIP(c *fiber.Ctx) string {
	peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	if !ok {
		return c.IP()
	}
	peer = peer.Unmap()
	if !s.trustedProxy(peer) {
		return peer.String()
	}
	var hops []string
	for _, h := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		hops = append(hops, strings.Split(string(h), ",")...)
	}
	ip := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		ip = a.Unmap()
		if !s.trustedProxy(ip) {
			break
		}
	}
	return ip.String()
}

func (s *Server) trustedProxy(a netip.Addr) bool {
	for _, p := range s.Config.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// idempotency makes a POST with an Idempotency-Key safe to retry (Stripe's
// semantics, internal/idempotency): it runs inside the tenant transaction, so
// the stored answer commits with the change it answers. Same key and same
// request within 24 h: the first answer again, with Idempotent-Replayed: true;
// same key, different request: 422; the first still running: 409.
func (s *Server) idempotency(c *fiber.Ctx) error {
	key := c.Get(idempotency.Header)
	if c.Method() != fiber.MethodPost || key == "" {
		return c.Next()
	}
	if err := idempotency.ValidKey(key); err != nil {
		return InvalidParameter("%s", err.Error())
	}
	p, ctx := principal(c), c.UserContext()
	req := idempotency.Request{Method: c.Method(), Path: c.Path(), Hash: idempotency.Hash(c.Method(), c.OriginalURL(), p.Subject, c.Body())}
	action, answer, err := idempotency.Begin(ctx, requestTx(c), p.TenantID, key, req)
	switch {
	case errors.Is(err, idempotency.ErrMismatch):
		return Invalid(FieldError{Field: idempotency.Header, Code: "idempotency_key_reused", Message: err.Error()})
	case errors.Is(err, idempotency.ErrInFlight):
		return Conflict("%s", err.Error())
	case err != nil:
		return err
	case action == idempotency.Replay:
		return replay(c, answer)
	}

	err = c.Next()
	committedEarly := c.Locals(localTx) == nil // endTx: the change (and the in-flight key) committed before the answer
	if !committedEarly {
		if err != nil || !idempotency.Stores(c.Response().StatusCode(), false) {
			return err // rolled back with the change: a retry runs again
		}
		return finishIdempotency(ctx, requestTx(c), p.TenantID, key, c)
	}
	if err != nil {
		if herr := s.app.ErrorHandler(c, err); herr != nil {
			return herr
		}
	}
	// The answer goes in its own transaction; if this fails, the key stays in
	// flight and is retried after idempotency.AbandonedAfter.
	if ferr := db.InTenant(context.WithoutCancel(ctx), s.Pool, p.TenantID, func(tx pgx.Tx) error {
		return finishIdempotency(ctx, tx, p.TenantID, key, c)
	}); ferr != nil {
		s.log.ErrorContext(ctx, "storing the idempotent answer failed", "request_id", requestID(c), "error", ferr)
	}
	return nil
}

// finishIdempotency stores the answer being sent under the request's key.
func finishIdempotency(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, key string, c *fiber.Ctx) error {
	answer := idempotency.Answer{Status: c.Response().StatusCode(), Body: c.Response().Body()}
	for k, v := range c.Response().Header.All() {
		if idempotency.KeepHeader(string(k)) {
			answer.Headers = append(answer.Headers, [2]string{string(k), string(v)})
		}
	}
	return idempotency.Finish(context.WithoutCancel(ctx), tx, tenantID, key, answer)
}

// replay sends the stored answer.
func replay(c *fiber.Ctx, answer idempotency.Answer) error {
	for _, h := range answer.Headers {
		c.Set(h[0], h[1])
	}
	c.Set(idempotency.ReplayedHeader, "true")
	return c.Status(answer.Status).Send(answer.Body)
}
