// Package db owns the schema (embedded goose migrations), the connection pool
// and the transaction helpers that put every query in a tenant's scope.
package db

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/valuecase/valuecase/db/dbsqlc"
)

//go:embed migrations/*.sql
var Migrations embed.FS

// Q is the one set of generated queries; its methods take the pool or a transaction.
var Q = dbsqlc.New()

// SessionSettings are the server settings each of the service's connections starts with,
// unless DATABASE_URL names the setting itself (e.g. jit=on).
//
// JIT is off: the service runs short statements, and a generic plan whose cost estimate
// passes jit_above_cost (a claim planned while a backlog was pending) compiled its
// expressions on every execution, several milliseconds each time for a statement that runs
// in under one.
var SessionSettings = map[string]string{"jit": "off"}

// NewPool connects to PostgreSQL and checks the connection.
func NewPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	for k, v := range SessionSettings {
		if _, set := cfg.ConnConfig.RuntimeParams[k]; !set {
			cfg.ConnConfig.RuntimeParams[k] = v
		}
	}
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	if !strings.Contains(dsn, "pool_max_conns") {
		// pgxpool's default (max(4, CPUs)) starves concurrent requests on small machines.
		cfg.MaxConns = max(16, int32(4*runtime.NumCPU()))
	}
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		registerUUID(conn)
		registerDecimal(conn)
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return pool, nil
}

// Migrate applies all pending migrations.
func Migrate(ctx context.Context, dsn string) error {
	conn, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer conn.Close()
	return MigrateDB(ctx, conn)
}

// MigrateDB applies all pending migrations on an open database handle.
func MigrateDB(ctx context.Context, conn *sql.DB) error {
	provider, err := goose.NewProvider(goose.DialectPostgres, conn, mustSub(Migrations, "migrations"))
	if err != nil {
		return err
	}
	_, err = provider.Up(ctx)
	return err
}

// Tx is what query code receives inside InTenant/InSystem.
type Tx = pgx.Tx

// Beginner is a pool or a connection that can start transactions (not a
// transaction: its Begin is a savepoint, which cannot carry a scope).
type Beginner interface {
	BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error)
}

// ErrUnavailable marks a failure to reach the database at all (no transaction
// could start), as opposed to a statement failing inside one.
var ErrUnavailable = errors.New("database unavailable")

// SetTenantSQL scopes the current transaction to a tenant ($1, its id as text).
const SetTenantSQL = "SELECT set_config('app.tenant_id', $1, true)"

// setTenantAuditSQL is SetTenantSQL plus who writes and for which request
// ($2 actor, $3 request id), read by the audit trigger (migration 00015).
const setTenantAuditSQL = "SELECT set_config('app.tenant_id', $1, true), set_config('app.actor', $2, true), set_config('app.request_id', $3, true)"

type auditKey struct{}

// audit is who a context's writes are recorded as in audit_events.
type audit struct{ actor, requestID string }

// WithActor makes the tenant transactions begun with ctx record their writes
// in the audit log as done by actor (a principal's subject, or "system:<what>"
// for work no request asked for) in the request requestID ("" for none).
// Without it the audit log says "system".
func WithActor(ctx context.Context, actor, requestID string) context.Context {
	return context.WithValue(ctx, auditKey{}, audit{actor: actor, requestID: requestID})
}

// setTenant is the statement that scopes a transaction to the tenant, with
// the context's actor and request id when it has them.
func setTenant(ctx context.Context, tenantID uuid.UUID) (string, []any) {
	if a, ok := ctx.Value(auditKey{}).(audit); ok {
		return setTenantAuditSQL, []any{tenantID.String(), a.actor, a.requestID}
	}
	return SetTenantSQL, []any{tenantID.String()}
}

// BeginTenant starts a transaction scoped to one tenant: row-level security
// shows and accepts only that tenant's rows until it ends. The actor and
// request id of WithActor go with it for the audit trigger, in the same round
// trip as the BEGIN (beginWith).
func BeginTenant(ctx context.Context, b Beginner, tenantID uuid.UUID) (pgx.Tx, error) {
	set := "SELECT set_config('app.tenant_id', '" + tenantID.String() + "', true)"
	if a, ok := ctx.Value(auditKey{}).(audit); ok {
		actor, err := literalText(a.actor)
		if err != nil {
			return nil, fmt.Errorf("audit actor: %w", err)
		}
		req, err := literalText(a.requestID)
		if err != nil {
			return nil, fmt.Errorf("audit request id: %w", err)
		}
		set += ", set_config('app.actor', " + actor + ", true), set_config('app.request_id', " + req + ", true)"
	}
	return beginWith(ctx, b, set)
}

// beginWith starts a transaction whose first statement is set (the scope's
// settings), sent with the BEGIN as one simple-protocol query: one round trip.
func beginWith(ctx context.Context, b Beginner, set string) (pgx.Tx, error) {
	tx, err := b.BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN; " + set})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return tx, nil
}

// Snapshot begins read-only repeatable-read transactions on Pool: every
// statement of one reads the same state (an export of many pages).
type Snapshot struct{ Pool *pgxpool.Pool }

// BeginTx makes the BEGIN of beginWith's query a read-only repeatable read.
func (s Snapshot) BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error) {
	o.BeginQuery = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" + strings.TrimPrefix(o.BeginQuery, "BEGIN")
	return s.Pool.BeginTx(ctx, o)
}

// literalText is s as a SQL escape-string literal (E'...': backslashes and
// quotes doubled), which reads the same whatever standard_conforming_strings
// says. A NUL or invalid UTF-8 is no PostgreSQL text at all, literal or parameter.
func literalText(s string) (string, error) {
	if strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
		return "", errors.New("not valid text (a NUL or invalid UTF-8)")
	}
	return quoteLiteral(s), nil
}

// quoteLiteral is s as an SQL string literal. It does not check s: literalText does, for
// text that is not a constant of the code.
func quoteLiteral(s string) string { return "E'" + literalEscaper.Replace(s) + "'" }

// literalEscaper doubles backslashes and quotes. One for the process (a
// Replacer is safe for concurrent use): building one allocates 6 KB, which
// every transaction begun paid.
var literalEscaper = strings.NewReplacer(`\`, `\\`, `'`, `''`)

// InTenant runs fn in a tenant-scoped transaction, committing when fn succeeds.
func InTenant(ctx context.Context, b Beginner, tenantID uuid.UUID, fn func(tx pgx.Tx) error) error {
	tx, err := BeginTenant(ctx, b, tenantID)
	if err != nil {
		return err
	}
	return finish(ctx, tx, fn(tx))
}

// systemScopeSQL opens the system scope of InSystem for the transaction.
const systemScopeSQL = "SELECT set_config('app.scope', 'system', true)"

// InSystem runs fn in a transaction that may see every tenant's outbox events
// (and nothing else); only the outbox relay uses it.
func InSystem(ctx context.Context, b Beginner, fn func(tx pgx.Tx) error) error {
	tx, err := beginWith(ctx, b, systemScopeSQL)
	if err != nil {
		return err
	}
	return finish(ctx, tx, fn(tx))
}

func finish(ctx context.Context, tx pgx.Tx, err error) error {
	if err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	return tx.Commit(ctx)
}

// IsNotFound reports whether err means the query matched no row.
func IsNotFound(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// IsUniqueViolation reports whether err is a unique-constraint violation, optionally of one constraint.
func IsUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && (constraint == "" || pgErr.ConstraintName == constraint)
}

// IsWriteCollision reports a transaction PostgreSQL aborted because it
// collided with a concurrent one (deadlock 40P01, serialization failure
// 40001): nothing of it was written, and the same request succeeds when
// retried. The rollups' shared rows (migrations 00013, 00017, 00019) make such
// collisions possible between concurrent multi-statement writes of actuals.
func IsWriteCollision(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

func init() {
	// Register the pgx database/sql driver under "pgx" for goose and the test helpers.
	_ = stdlib.GetDefaultDriver()
}

// DateText is a date as the text[] parameters of the multi-row statements
// carry it ("" is none; the statement casts NULLIF(x, ”)::date).
func DateText(d *time.Time) string {
	if d == nil {
		return ""
	}
	return d.Format(time.DateOnly)
}
