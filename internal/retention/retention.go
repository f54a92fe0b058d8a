// Package retention removes what the service no longer needs to keep, in
// small batches: published outbox events, finished webhook deliveries,
// expired sessions and refresh tokens, expired export files, expired
// idempotency keys and audit events past their retention. The
// maintenance/retention schedule runs it (workflows/maintenance_retention.go).
//
// Each batch is one statement of at most BatchSize rows of one tenant, in a
// tenant transaction of its own: row-level security stays the only way rows
// are reached (no cross-tenant policy), no statement holds many locks, and a
// worker killed mid-run loses at most one batch of work, which the next run redoes.
package retention

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Actor is who the audit log says removed what retention removes (exports' files).
const Actor = "system:retention"

// DefaultBatchSize is the most rows one statement removes.
const DefaultBatchSize = 1000

// MinAuditEvents is the shortest audit retention accepted: an audit log that
// forgets within weeks is not one.
const MinAuditEvents = 90 * 24 * time.Hour

// Periods are how long each kind of row is kept past the moment it stops
// being needed (published, finished, expired or ended, written).
type Periods struct {
	Outbox            time.Duration // after publication
	WebhookDeliveries time.Duration // after the last change of a delivered or failed delivery
	Sessions          time.Duration // after a session or refresh token expired or ended
	AuditEvents       time.Duration // after the event
}

// Kinds of rows removed, in the order a run visits them (the keys of Result).
const (
	KindOutbox            = "outbox_events"
	KindWebhookDeliveries = "webhook_deliveries"
	KindSessions          = "auth_sessions"
	KindRefreshTokens     = "refresh_tokens"
	KindExports           = "export_files"
	KindIdempotencyKeys   = "idempotency_keys"
	KindAuditEvents       = "audit_events"
)

// Result counts the rows removed per kind.
type Result map[string]int64

// Purger removes rows past their retention.
type Purger struct {
	Pool      *pgxpool.Pool
	Periods   Periods
	BatchSize int // 0: DefaultBatchSize
}

// purge is one batched statement: it removes at most size rows of a tenant kept since before.
type purge struct {
	kind string
	keep func(Periods) time.Duration
	run  func(ctx context.Context, tx db.Tx, tenant uuid.UUID, before time.Time, size int32) (int64, error)
}

var purges = []purge{
	{KindOutbox, func(p Periods) time.Duration { return p.Outbox }, func(ctx context.Context, tx db.Tx, t uuid.UUID, before time.Time, n int32) (int64, error) {
		return db.Q.RetentionPurgeOutbox(ctx, tx, dbsqlc.RetentionPurgeOutboxParams{TenantID: t, Before: &before, BatchSize: n})
	}},
	{KindWebhookDeliveries, func(p Periods) time.Duration { return p.WebhookDeliveries }, func(ctx context.Context, tx db.Tx, t uuid.UUID, before time.Time, n int32) (int64, error) {
		return db.Q.RetentionPurgeWebhookDeliveries(ctx, tx, dbsqlc.RetentionPurgeWebhookDeliveriesParams{TenantID: t, Before: before, BatchSize: n})
	}},
	{KindSessions, func(p Periods) time.Duration { return p.Sessions }, func(ctx context.Context, tx db.Tx, t uuid.UUID, before time.Time, n int32) (int64, error) {
		return db.Q.RetentionPurgeSessions(ctx, tx, dbsqlc.RetentionPurgeSessionsParams{TenantID: t, Before: before, BatchSize: n})
	}},
	{KindRefreshTokens, func(p Periods) time.Duration { return p.Sessions }, func(ctx context.Context, tx db.Tx, t uuid.UUID, before time.Time, n int32) (int64, error) {
		return db.Q.RetentionPurgeRefreshTokens(ctx, tx, dbsqlc.RetentionPurgeRefreshTokensParams{TenantID: t, Before: before, BatchSize: n})
	}},
	// Export files: their own expires_at is the retention (export.DefaultRetention); the row stays.
	{KindExports, func(Periods) time.Duration { return 0 }, func(ctx context.Context, tx db.Tx, t uuid.UUID, _ time.Time, n int32) (int64, error) {
		return db.Q.ExportPurgeExpired(ctx, tx, dbsqlc.ExportPurgeExpiredParams{TenantID: t, BatchSize: n})
	}},
	// Idempotency keys: their expires_at is already created_at + idempotency.TTL (24 h).
	{KindIdempotencyKeys, func(Periods) time.Duration { return 0 }, func(ctx context.Context, tx db.Tx, t uuid.UUID, before time.Time, n int32) (int64, error) {
		return db.Q.RetentionPurgeIdempotencyKeys(ctx, tx, dbsqlc.RetentionPurgeIdempotencyKeysParams{TenantID: t, Before: before, BatchSize: n})
	}},
	{KindAuditEvents, func(p Periods) time.Duration { return p.AuditEvents }, func(ctx context.Context, tx db.Tx, t uuid.UUID, before time.Time, n int32) (int64, error) {
		return db.Q.RetentionPurgeAuditEvents(ctx, tx, dbsqlc.RetentionPurgeAuditEventsParams{TenantID: t, Before: before, BatchSize: n})
	}},
}

// Validate refuses periods that would remove what must stay.
func (p Periods) Validate() error {
	var errs []error
	for name, d := range map[string]time.Duration{"outbox": p.Outbox, "webhook deliveries": p.WebhookDeliveries, "sessions": p.Sessions} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s retention must be positive", name))
		}
	}
	if p.AuditEvents < MinAuditEvents {
		errs = append(errs, fmt.Errorf("audit events retention must be at least %s", MinAuditEvents))
	}
	return errors.Join(errs...)
}

// Run removes, for every tenant, every kind of row past its retention as of
// now, batch by batch; progress is called after each batch (the activity
// heartbeats there, and its cancellation stops the run between batches).
func (p Purger) Run(ctx context.Context, now time.Time, progress func(Result)) (Result, error) {
	if err := p.Periods.Validate(); err != nil {
		return nil, err
	}
	size := p.BatchSize
	if size <= 0 {
		size = DefaultBatchSize
	}
	ctx = db.WithActor(ctx, Actor, "")
	tenants, err := db.Q.RetentionTenants(ctx, p.Pool) // the registry is not tenant-scoped
	if err != nil {
		return nil, fmt.Errorf("%w: %w", db.ErrUnavailable, err)
	}
	res := Result{}
	for _, tenant := range tenants {
		for _, pg := range purges {
			before := now.Add(-pg.keep(p.Periods))
			for {
				if err := ctx.Err(); err != nil {
					return res, err
				}
				var n int64
				err := db.InTenant(ctx, p.Pool, tenant, func(tx db.Tx) error {
					var err error
					n, err = pg.run(ctx, tx, tenant, before, int32(size))
					return err
				})
				if err != nil {
					return res, fmt.Errorf("purge %s of tenant %s: %w", pg.kind, tenant, err)
				}
				res[pg.kind] += n
				if progress != nil {
					progress(res)
				}
				if n < int64(size) {
					break
				}
			}
		}
	}
	return res, nil
}
