// Package dbtest gives each test its own migrated PostgreSQL database,
// connected as a role that is neither superuser nor BYPASSRLS, like production.
package dbtest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io/fs"
	"net/url"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/peterldowns/pgtestdb"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// AdminURL is the superuser connection that creates the per-test databases.
func AdminURL() string {
	if u := os.Getenv("TEST_DATABASE_ADMIN_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

func config(t testing.TB) pgtestdb.Config {
	u, err := url.Parse(AdminURL())
	if err != nil {
		t.Fatalf("TEST_DATABASE_ADMIN_URL: %v", err)
	}
	pw, _ := u.User.Password()
	return pgtestdb.Config{
		DriverName: "pgx",
		Host:       u.Hostname(),
		Port:       u.Port(),
		User:       u.User.Username(),
		Password:   pw,
		Database:   u.Path[1:],
		Options:    "sslmode=disable",
		TestRole: &pgtestdb.Role{
			Username:     "valuecase_test",
			Password:     "valuecase_test",
			Capabilities: "NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS",
		},
	}
}

type migrator struct{}

func (migrator) Hash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(db.Migrations, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := db.Migrations.ReadFile(path)
		h.Write([]byte(path))
		h.Write(b)
		return err
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

func (migrator) Migrate(ctx context.Context, conn *sql.DB, _ pgtestdb.Config) error {
	return db.MigrateDB(ctx, conn)
}

// URL returns the connection URL of a fresh migrated database for this test.
func URL(t testing.TB) string {
	t.Helper()
	return pgtestdb.Custom(t, config(t), migrator{}).URL()
}

// NewPool returns a pool on a fresh migrated database, closed when the test ends.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := db.NewPool(context.Background(), URL(t))
	if err != nil {
		t.Fatalf("connect test database: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// NewTenant creates a tenant on the given plan and returns its id.
func NewTenant(t testing.TB, pool *pgxpool.Pool, plan string) uuid.UUID {
	t.Helper()
	params := dbsqlc.TenantCreateParams{Name: "Tenant " + uuid.NewString()[:8], Plan: plan}
	if plan == "enterprise_plus" {
		rpm, burst, conc := int32(10000), int32(1000), int32(100)
		params.RequestsPerMinute, params.Burst, params.MaxConcurrent = &rpm, &burst, &conc
	}
	tenant, err := db.Q.TenantCreate(context.Background(), pool, params)
	if err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	return tenant.ID
}

// OneConnection returns a pool of one connection to the same database as pool, with the
// server settings given (e.g. plan_cache_mode), closed when the test ends: the work whose reads
// RowsRead counts runs on it alone.
func OneConnection(t testing.TB, pool *pgxpool.Pool, settings map[string]string) *pgxpool.Pool {
	t.Helper()
	one := oneConnection(t, pool.Config(), settings)
	flushStats(t, pool)
	return one
}

// oneConnection opens a pool of one connection as cfg says, with the server settings given on
// top of its own, closed when the test ends.
func oneConnection(t testing.TB, cfg *pgxpool.Config, settings map[string]string) *pgxpool.Pool {
	t.Helper()
	cfg.MaxConns = 1
	for k, v := range settings {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	one, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(one.Close)
	return one
}

// flushStats publishes the table counters of every idle connection of pool now. A backend
// publishes them when it goes idle, at most once a second unless forced: without this, a
// setup's reads could be published while the work under measurement runs.
func flushStats(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	for _, c := range pool.AcquireAllIdle(context.Background()) {
		_, err := c.Exec(context.Background(), "SELECT pg_stat_force_next_flush()")
		c.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// RowsRead is how many rows of table the database's backends have read so far (sequential
// scans and index fetches), with one's own counters published first.
func RowsRead(t testing.TB, one *pgxpool.Pool, table string) int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := one.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := one.QueryRow(ctx, `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
		FROM pg_stat_user_tables WHERE relname = $1`, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// RowsReadInTx is how many rows of table tx's backend has read in its transactions whose
// counters are not yet published (this one's and the earlier ones'): compare two readings.
func RowsReadInTx(t testing.TB, tx pgx.Tx, table string) int64 {
	t.Helper()
	var n int64
	if err := tx.QueryRow(context.Background(), `SELECT coalesce(sum(seq_tup_read + idx_tup_fetch), 0)::bigint
		FROM pg_stat_xact_user_tables WHERE relname = $1`, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// IndexBlocksInTx is how many blocks of table's indexes tx's backend has read in its transactions
// whose counters are not yet published: an index scan that walks entries it then rejects reads no
// more rows (RowsReadInTx) but more blocks. Compare two readings.
func IndexBlocksInTx(t testing.TB, tx pgx.Tx, table string) int64 {
	t.Helper()
	var n int64
	if err := tx.QueryRow(context.Background(), `SELECT coalesce(sum(pg_stat_get_xact_blocks_fetched(indexrelid)), 0)::bigint
		FROM pg_index WHERE indrelid = $1::regclass`, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
