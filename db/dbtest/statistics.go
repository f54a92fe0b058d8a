package dbtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TenantStatistics is one way the planner's statistics can size a tenant when a large tenant
// comes to a database of small ones (EachTenantStatistics).
type TenantStatistics struct {
	// SmallRows is how many rows of each table a small tenant gets: 3, or 1.
	SmallRows    int
	analyzeFirst bool
	tables       []string
}

// EachTenantStatistics runs test under the two statistics that trapped tenant-scoped plans:
// tenants of a few rows analyzed with the large tenant, so that a tenant looks like a few rows;
// and tenants of one row analyzed before the large tenant came, so that a tenant looks like one
// row and every index led by tenant_id as cheap as the primary key. The test seeds its small
// tenants with s.SmallRows rows each and calls s.SmallSeeded, then seeds its large tenant and
// calls s.LargeSeeded; one of the two analyzes tables.
func EachTenantStatistics(t *testing.T, tables []string, test func(t *testing.T, s TenantStatistics)) {
	for _, s := range []TenantStatistics{{SmallRows: 3, tables: tables}, {SmallRows: 1, analyzeFirst: true, tables: tables}} {
		name := "tenants of a few rows, statistics with the large tenant"
		if s.analyzeFirst {
			name = "tenants of one row, statistics before the large tenant"
		}
		t.Run(name, func(t *testing.T) { test(t, s) })
	}
}

// SmallSeeded is called once the small tenants are seeded.
func (s TenantStatistics) SmallSeeded(t testing.TB, pool *pgxpool.Pool) {
	if s.analyzeFirst {
		analyze(t, pool, s.tables)
	}
}

// LargeSeeded is called once the large tenant is seeded.
func (s TenantStatistics) LargeSeeded(t testing.TB, pool *pgxpool.Pool) {
	if !s.analyzeFirst {
		analyze(t, pool, s.tables)
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
