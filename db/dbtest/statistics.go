package dbtest

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PastCustomPlans is how many times a test runs a statement to reach the plan it keeps:
// PostgreSQL plans a prepared statement's first five executions with their parameters, then
// may switch to the generic plan.
const PastCustomPlans = 7

// LargeTenant is the tenant EachTenantStatistics seeds last, in a database of small ones.
type LargeTenant struct {
	Pool *pgxpool.Pool
	ID   uuid.UUID
	IDs  []uuid.UUID // what seed returned for it
}

// EachTenantStatistics runs test under the two statistics that trapped tenant-scoped plans:
// tenants of a few rows analyzed with the large tenant, so that a tenant looks like a few rows;
// and tenants of one row analyzed before the large tenant came, so that a tenant looks like one
// row and every index led by tenant_id as cheap as the primary key. Each run has a fresh
// database of 300 small tenants, each seeded by seed with small the rows of each table it gets
// (3, or 1), then the large tenant, seeded by seed with small 0 (the test's own size); tables
// are analyzed after the small tenants or after the large one.
func EachTenantStatistics(t *testing.T, tables []string, seed func(t *testing.T, pool *pgxpool.Pool, tenant uuid.UUID, small int) []uuid.UUID,
	test func(t *testing.T, large LargeTenant)) {
	for _, s := range []struct {
		name         string
		small        int
		analyzeFirst bool
	}{
		{"tenants of a few rows, statistics with the large tenant", 3, false},
		{"tenants of one row, statistics before the large tenant", 1, true},
	} {
		t.Run(s.name, func(t *testing.T) {
			pool := NewPool(t)
			for range 300 {
				seed(t, pool, NewTenant(t, pool, "enterprise"), s.small)
			}
			if s.analyzeFirst {
				analyze(t, pool, tables)
			}
			large := LargeTenant{Pool: pool, ID: NewTenant(t, pool, "enterprise")}
			large.IDs = seed(t, pool, large.ID, 0)
			if !s.analyzeFirst {
				analyze(t, pool, tables)
			}
			test(t, large)
		})
	}
}

func analyze(t testing.TB, pool *pgxpool.Pool, tables []string) {
	t.Helper()
	for _, table := range tables {
		if _, err := pool.Exec(context.Background(), "ANALYZE "+pgx.Identifier{table}.Sanitize()); err != nil {
			t.Fatal(err)
		}
	}
}

// Reads is what a transaction's backend has read of some tables since StartReads: their rows
// (RowsReadInTx) and their indexes' blocks (IndexBlocksInTx).
type Reads struct {
	t            testing.TB
	tx           pgx.Tx
	tables       []string
	rows, blocks []int64
}

// StartReads starts counting what tx reads of tables.
func StartReads(t testing.TB, tx pgx.Tx, tables ...string) *Reads {
	r := &Reads{t: t, tx: tx, tables: tables, rows: make([]int64, len(tables)), blocks: make([]int64, len(tables))}
	for k, table := range tables {
		r.rows[k], r.blocks[k] = RowsReadInTx(t, tx, table), IndexBlocksInTx(t, tx, table)
	}
	return r
}

// Check logs what was read of each table since StartReads by what (such as "7 locks of 17
// benefits") and fails the test where a table's rows passed maxRows[k] or its index blocks
// maxBlocks[k].
func (r *Reads) Check(what string, maxRows, maxBlocks []int64) {
	r.t.Helper()
	for k, table := range r.tables {
		rows, blocks := RowsReadInTx(r.t, r.tx, table)-r.rows[k], IndexBlocksInTx(r.t, r.tx, table)-r.blocks[k]
		r.t.Logf("%s: %s read %d rows and %d index blocks", table, what, rows, blocks)
		if rows > maxRows[k] || blocks > maxBlocks[k] {
			r.t.Errorf("%s: %s read %d rows and %d index blocks, want at most %d and %d", table, what, rows, blocks, maxRows[k], maxBlocks[k])
		}
	}
}
