package db_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
)

// queryLog records the SQL a pool sends.
type queryLog struct {
	mu  sync.Mutex
	sql []string
}

func (l *queryLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sql = append(l.sql, d.SQL)
	return ctx
}
func (l *queryLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *queryLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.sql
	l.sql = nil
	return out
}

// A tenant transaction carries the tenant, the actor and the request id to
// the audit trigger exactly as given, whatever characters they hold, and
// begins in one round trip.
func TestBeginTenantSettings(t *testing.T) {
	ctx := context.Background()
	base := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, base, "starter")
	cfg, err := pgxpool.ParseConfig(base.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	log := &queryLog{}
	cfg.ConnConfig.Tracer = log
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	for _, tc := range []struct{ actor, requestID string }{
		{"user-1", "req-1"},
		{"O'Brien", ""},
		{"x', true); DROP TABLE initiatives; --", "r'); SELECT 1; --"},
		{"ünïcødé ✓", "req-ü"},
		{`back\slash'`, `\'; SELECT 1; --`},
	} {
		log.take()
		var gotTenant, gotActor, gotRequest string
		err := db.InTenant(db.WithActor(ctx, tc.actor, tc.requestID), pool, tenant, func(tx pgx.Tx) error {
			sent := log.take()
			if len(sent) != 1 || !strings.HasPrefix(sent[0], "BEGIN; ") {
				t.Errorf("actor %q: began with %q; want one query", tc.actor, sent)
			}
			return tx.QueryRow(ctx, `SELECT current_setting('app.tenant_id'), current_setting('app.actor'), current_setting('app.request_id')`).
				Scan(&gotTenant, &gotActor, &gotRequest)
		})
		if err != nil {
			t.Fatalf("actor %q: %v", tc.actor, err)
		}
		if gotTenant != tenant.String() || gotActor != tc.actor || gotRequest != tc.requestID {
			t.Errorf("settings %q %q %q; want %q %q %q", gotTenant, gotActor, gotRequest, tenant, tc.actor, tc.requestID)
		}
	}
	// A NUL is no PostgreSQL text: refused before anything is sent.
	if err := db.InTenant(db.WithActor(ctx, "nul\x00", "r"), pool, tenant, func(pgx.Tx) error { return nil }); err == nil {
		t.Error("an actor with a NUL began a transaction")
	}

	// A snapshot transaction is a read-only repeatable read, scoped like any other.
	var iso, readOnly, snapTenant string
	if err := db.InTenant(ctx, db.Snapshot{Pool: pool}, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only'), current_setting('app.tenant_id')`).
			Scan(&iso, &readOnly, &snapTenant)
	}); err != nil {
		t.Fatal(err)
	}
	if iso != "repeatable read" || readOnly != "on" || snapTenant != tenant.String() {
		t.Errorf("snapshot: %s, read only %s, tenant %s", iso, readOnly, snapTenant)
	}

	var tables int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'initiatives'`).Scan(&tables); err != nil || tables != 1 {
		t.Fatalf("initiatives table: %d, %v", tables, err)
	}

	// The settings are the transaction's: gone after it, and a failed fn rolls back.
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO initiatives (tenant_id, name) VALUES ($1, 'rolled back')`, tenant)
		if err != nil {
			return err
		}
		return context.Canceled
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("InTenant returned %v", err)
	}
	var n int
	var after string
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM initiatives`).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT coalesce(current_setting('app.tenant_id', true), '')`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if n != 0 || after != "" {
		t.Errorf("after a failed transaction: %d initiatives visible, tenant setting %q; want 0 and none", n, after)
	}
}

// The service's connections start with JIT off (db.SessionSettings) unless DATABASE_URL names
// the setting: a short statement planned above jit_above_cost compiled its expressions on every
// execution.
func TestPoolSessionSettings(t *testing.T) {
	for _, c := range []struct{ suffix, want string }{{"", "off"}, {"&jit=on", "on"}} {
		pool, err := db.NewPool(context.Background(), dbtest.URL(t)+c.suffix)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = pool.QueryRow(context.Background(), "SHOW jit").Scan(&got)
		pool.Close()
		if err != nil || got != c.want {
			t.Errorf("DATABASE_URL ...%s: jit = %q (%v), want %q", c.suffix, got, err, c.want)
		}
	}
}
