package retention_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/retention"
)

// periods are the defaults of the configuration table.
var periods = retention.Periods{Outbox: 168 * time.Hour, WebhookDeliveries: 720 * time.Hour, Sessions: 168 * time.Hour, AuditEvents: 9600 * time.Hour}

// seed gives a tenant `old` rows of every kind past their retention (sessions: old-1
// expired and 1 ended) and a few that must stay: fresh or still needed.
const seed = `
WITH u AS (INSERT INTO users (tenant_id, subject, status) VALUES (@t, 'u-1', 'active') RETURNING id),
     i AS (INSERT INTO initiatives (tenant_id, name, status) VALUES (@t, 'I', 'draft') RETURNING id),
     b AS (INSERT INTO business_cases (tenant_id, initiative_id, lineage_id, name, template, sections, created_by)
           SELECT @t, i.id, gen_random_uuid(), 'Case', 'cfo_view', '{summary}', 'u-1' FROM i RETURNING id),
     w AS (INSERT INTO webhooks (tenant_id, url, events, secret_sealed, secret_hint) VALUES (@t, 'https://hooks.example.com', '{initiative.created}', '\x00', 'abcd') RETURNING id),
     -- outbox: old published (removed), recently published and old pending (kept)
     o1 AS (INSERT INTO outbox_events (tenant_id, type, data, created_at, published_at)
            SELECT @t, 'x', '{}', now() - interval '9 days', now() - interval '8 days' FROM generate_series(1, @old) RETURNING 1),
     o2 AS (INSERT INTO outbox_events (tenant_id, type, data, published_at) SELECT @t, 'x', '{}', now() - interval '1 hour' RETURNING 1),
     o3 AS (INSERT INTO outbox_events (tenant_id, type, data, created_at) SELECT @t, 'x', '{}', now() - interval '60 days' RETURNING 1),
     -- deliveries: finished 31 days ago (removed), finished yesterday and retrying since long ago (kept)
     d1 AS (INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, status, updated_at)
            SELECT @t, w.id, gen_random_uuid(), 'x', CASE WHEN g % 2 = 0 THEN 'delivered' ELSE 'failed' END, now() - interval '31 days'
            FROM w, generate_series(1, @old) g RETURNING 1),
     d2 AS (INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, status, updated_at)
            SELECT @t, w.id, gen_random_uuid(), 'x', 'delivered', now() - interval '1 day' FROM w RETURNING 1),
     d3 AS (INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, status, updated_at)
            SELECT @t, w.id, gen_random_uuid(), 'x', 'retrying', now() - interval '60 days' FROM w RETURNING 1),
     -- sessions: expired or ended 8 days ago (removed), live (kept) with tokens expired 8 days ago (removed) and one live
     s1 AS (INSERT INTO auth_sessions (tenant_id, user_id, expires_at)
            SELECT @t, u.id, now() - interval '8 days' FROM u, generate_series(1, @old - 1) RETURNING 1),
     s2 AS (INSERT INTO auth_sessions (tenant_id, user_id, expires_at, ended_at, end_reason)
            SELECT @t, u.id, now() + interval '1 day', now() - interval '8 days', 'signed_out' FROM u RETURNING 1),
     s3 AS (INSERT INTO auth_sessions (tenant_id, user_id, expires_at) SELECT @t, u.id, now() + interval '1 day' FROM u RETURNING id),
     r1 AS (INSERT INTO refresh_tokens (tenant_id, session_id, public_id, token_hash, expires_at)
            SELECT @t, s3.id, 'p' || g, '\x00', now() - interval '8 days' FROM s3, generate_series(1, @old) g RETURNING 1),
     r2 AS (INSERT INTO refresh_tokens (tenant_id, session_id, public_id, token_hash, expires_at)
            SELECT @t, s3.id, 'live', '\x00', now() + interval '1 day' FROM s3 RETURNING 1),
     -- export files: expired (dropped, the row stays) and still served (kept)
     e1 AS (INSERT INTO business_case_exports (tenant_id, business_case_id, format, status, size, sha256, content, requested_by, expires_at)
            SELECT @t, b.id, 'pdf', 'succeeded', 1, 'h', '\x01', 'u-1', now() - interval '1 minute' FROM b, generate_series(1, @old) RETURNING 1),
     e2 AS (INSERT INTO business_case_exports (tenant_id, business_case_id, format, status, size, sha256, content, requested_by, expires_at)
            SELECT @t, b.id, 'pdf', 'succeeded', 1, 'h', '\x01', 'u-1', now() + interval '1 day' FROM b RETURNING 1),
     -- idempotency keys: past their 24 h (removed), within (kept)
     k1 AS (INSERT INTO idempotency_keys (tenant_id, key, request_hash, method, path, created_at, expires_at)
            SELECT @t, 'old-' || g, '\x00', 'POST', '/v1/x', now() - interval '25 hours', now() - interval '1 hour' FROM generate_series(1, @old) g RETURNING 1),
     k2 AS (INSERT INTO idempotency_keys (tenant_id, key, request_hash, method, path) VALUES (@t, 'new', '\x00', 'POST', '/v1/x') RETURNING 1),
     -- audit events: 401 days old (removed); the triggers' own events of this seed are fresh (kept)
     a1 AS (INSERT INTO audit_events (tenant_id, occurred_at, actor, action, resource_type, resource_id, changed_fields, changes)
            SELECT @t, now() - interval '401 days', 'someone', 'create', 'initiative', 'x', '{}', '{}' FROM generate_series(1, @old) RETURNING 1)
SELECT (SELECT count(*) FROM o1) + (SELECT count(*) FROM o2) + (SELECT count(*) FROM o3) + (SELECT count(*) FROM d1) + (SELECT count(*) FROM d2)
     + (SELECT count(*) FROM d3) + (SELECT count(*) FROM s1) + (SELECT count(*) FROM s2) + (SELECT count(*) FROM r1) + (SELECT count(*) FROM r2)
     + (SELECT count(*) FROM e1) + (SELECT count(*) FROM e2) + (SELECT count(*) FROM k1) + (SELECT count(*) FROM k2) + (SELECT count(*) FROM a1)`

func seedTenant(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, old int) {
	t.Helper()
	ctx := context.Background()
	if err := db.InTenant(ctx, pool, tenant, func(tx db.Tx) error {
		var n int
		return tx.QueryRow(ctx, seed, pgx.NamedArgs{"t": tenant, "old": old}).Scan(&n)
	}); err != nil {
		t.Fatalf("seed: %v", err)
	}
}

// counts is what a tenant holds after the run: rows left of each kind, and export files left.
func counts(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	if err := db.InTenant(ctx, pool, tenant, func(tx db.Tx) error {
		for kind, q := range map[string]string{
			retention.KindOutbox:            "SELECT count(*) FROM outbox_events",
			retention.KindWebhookDeliveries: "SELECT count(*) FROM webhook_deliveries",
			retention.KindSessions:          "SELECT count(*) FROM auth_sessions",
			retention.KindRefreshTokens:     "SELECT count(*) FROM refresh_tokens",
			retention.KindExports:           "SELECT count(*) FROM business_case_exports WHERE content IS NOT NULL",
			"export_rows":                   "SELECT count(*) FROM business_case_exports",
			retention.KindIdempotencyKeys:   "SELECT count(*) FROM idempotency_keys",
			"old_audit_events":              "SELECT count(*) FROM audit_events WHERE occurred_at < now() - interval '400 days'",
			"purge_audit_events":            "SELECT count(*) FROM audit_events WHERE actor = 'system:retention' AND action = 'status:failed' AND resource_type = 'export'",
		} {
			var n int
			if err := tx.QueryRow(ctx, q).Scan(&n); err != nil {
				return err
			}
			out[kind] = n
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPurgeRemovesOnlyWhatIsPastRetention: two tenants with rows of every
// kind, more past retention than a batch holds; one run removes exactly
// those, in every tenant, and keeps the fresh and the still-needed.
func TestPurgeRemovesOnlyWhatIsPastRetention(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	a, b := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")
	seedTenant(t, pool, a, 7) // 7 rows per kind: batches of 3, 3 and 1
	seedTenant(t, pool, b, 2)

	batches := 0
	res, err := retention.Purger{Pool: pool, Periods: periods, BatchSize: 3}.Run(ctx, time.Now(), func(retention.Result) { batches++ })
	if err != nil {
		t.Fatal(err)
	}
	want := retention.Result{retention.KindOutbox: 9, retention.KindWebhookDeliveries: 9, retention.KindSessions: 9,
		retention.KindRefreshTokens: 9, retention.KindExports: 9, retention.KindIdempotencyKeys: 9, retention.KindAuditEvents: 9}
	for k, n := range want {
		if res[k] != n {
			t.Errorf("%s: removed %d, want %d (result %v)", k, res[k], n, res)
		}
	}
	// Tenant a: 3 statements per kind (3, 3, 1); tenant b: 1 (2 < 3).
	if batches != 7*3+7*1 {
		t.Errorf("batches: %d, want %d", batches, 7*3+7)
	}
	for _, tenant := range []uuid.UUID{a, b} {
		got := counts(t, pool, tenant)
		// Kept: outbox recently published + old pending; deliveries finished yesterday + retrying;
		// the live session; its live token; the served export; the fresh key; no old audit event.
		wantLeft := map[string]int{retention.KindOutbox: 2, retention.KindWebhookDeliveries: 2, retention.KindSessions: 1,
			retention.KindRefreshTokens: 1, retention.KindExports: 1, retention.KindIdempotencyKeys: 1, "old_audit_events": 0}
		for k, n := range wantLeft {
			if got[k] != n {
				t.Errorf("tenant %s: %s left %d, want %d", tenant, k, got[k], n)
			}
		}
		old := map[uuid.UUID]int{a: 7, b: 2}[tenant]
		if got["export_rows"] != old+1 || got["purge_audit_events"] != old {
			t.Errorf("tenant %s: export rows %d (want %d: a dropped file's row stays), audit events of the drop %d (want %d, by %s)",
				tenant, got["export_rows"], old+1, got["purge_audit_events"], old, retention.Actor)
		}
	}

	// A second run finds nothing more.
	res, err = retention.Purger{Pool: pool, Periods: periods, BatchSize: 3}.Run(ctx, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range res {
		if n != 0 {
			t.Errorf("second run removed %d %s", n, k)
		}
	}
}

// TestPeriodsRefuseAShortAuditLog: an audit retention under 90 days is refused before anything is removed.
func TestPeriodsRefuseAShortAuditLog(t *testing.T) {
	p := periods
	p.AuditEvents = 30 * 24 * time.Hour
	if _, err := (retention.Purger{Periods: p}).Run(context.Background(), time.Now(), nil); err == nil {
		t.Fatal("a 30-day audit retention was accepted")
	}
}

// fresh gives a tenant n audit events within their retention: the table a tenant grows in most
// (every write of every audited table adds a row).
const fresh = `
INSERT INTO audit_events (tenant_id, actor, action, resource_type, resource_id, changed_fields, changes)
SELECT @t, 'someone', 'create', 'initiative', g::text, '{}', '{}' FROM generate_series(1, @n) g`

// TestPurgesReadTheirBatchOnly: no step of a purge statement handles more rows than its batch,
// however many rows of the tenant stay, under both statistics that mislead a tenant-scoped plan
// (dbtest.EachTenantStatistics). Written as `key IN (SELECT ... LIMIT)`, the purge of 7 old
// audit events among 100,000 read all 100,000 (a hash join over a scan of the table); on a
// tenant absent from the statistics, with a million events, it read each of them and ran the
// batch's query again for each (234 s for one batch).
func TestPurgesReadTheirBatchOnly(t *testing.T) {
	const old, stay, batch = 7, 100_000, 1000
	tables := []string{"outbox_events", "webhook_deliveries", "auth_sessions", "refresh_tokens", "idempotency_keys", "audit_events", "business_case_exports"}
	seed := func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, small int) []uuid.UUID {
		if small > 0 {
			seedTenant(t, pool, tenant, small)
			return nil
		}
		seedTenant(t, pool, tenant, old)
		if err := db.InTenant(context.Background(), pool, tenant, func(tx db.Tx) error {
			_, err := tx.Exec(context.Background(), fresh, pgx.NamedArgs{"t": tenant, "n": stay})
			return err
		}); err != nil {
			t.Fatalf("fresh audit events: %v", err)
		}
		return nil
	}
	dbtest.EachTenantStatistics(t, tables, seed, func(t *testing.T, large dbtest.LargeTenant) {
		explained, plans := dbtest.Explained(t, large.Pool, nil)
		if _, err := (retention.Purger{Pool: explained, Periods: periods, BatchSize: batch}).Run(context.Background(), time.Now(), nil); err != nil {
			t.Fatal(err)
		}
		got := counts(t, large.Pool, large.ID)
		wantLeft := map[string]int{retention.KindOutbox: 2, retention.KindWebhookDeliveries: 2, retention.KindSessions: 1,
			retention.KindRefreshTokens: 1, retention.KindExports: 1, retention.KindIdempotencyKeys: 1, "old_audit_events": 0}
		for k, n := range wantLeft {
			if got[k] != n {
				t.Errorf("%s left %d, want %d", k, got[k], n)
			}
		}
		explainedPurges := map[string]int{}
		for _, p := range plans() {
			name := p.Statement()
			if !strings.HasPrefix(name, "RetentionPurge") && name != "ExportPurgeExpired" {
				continue
			}
			explainedPurges[name]++
			p.Plan.Walk(func(n dbtest.PlanNode) {
				if rows := n.ActualRows * n.ActualLoops; rows > batch {
					t.Errorf("%s: %s of %s handled %v rows (%v times), more than a batch of %d", name, n.NodeType, n.Relation, rows, n.ActualLoops, batch)
				}
			})
		}
		if len(explainedPurges) != 7 {
			t.Errorf("purges explained: %v, want the 7 statements", explainedPurges)
		}
	})
}
