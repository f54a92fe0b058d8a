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
