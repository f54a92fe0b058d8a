package db_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
)

// Amounts read from numeric are exactly PostgreSQL's digits, through the
// binary codec: small and huge, negative, many decimals, in arrays, as
// nullable pointers; NULL into a decimal.Decimal and NaN are errors. Written
// values come back equal.
func TestDecimalRoundTrip(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan := fmt.Sprintf("%T", conn.Conn().TypeMap().PlanScan(1700, pgx.BinaryFormatCode, &decimal.Decimal{}))
	conn.Release()
	if plan != "db.scanDecimal" {
		t.Fatalf("numeric is read into a decimal.Decimal by %s, not from its binary form", plan)
	}
	for _, literal := range []string{"292.275", "0", "-2.345", "0.00000000000000000001", "-123456789012345678901234567890.123456789",
		"1000000000000", "6263.345000"} {
		var got decimal.Decimal
		if err := pool.QueryRow(ctx, "SELECT $1::numeric", literal).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := decimal.RequireFromString(literal); !got.Equal(want) {
			t.Errorf("%s read as %s", literal, got)
		}
	}
	var many []decimal.Decimal
	var null, set *decimal.Decimal
	if err := pool.QueryRow(ctx, "SELECT ARRAY[1.005, 2.675]::numeric[], NULL::numeric, 0.10::numeric").Scan(&many, &null, &set); err != nil {
		t.Fatal(err)
	}
	if len(many) != 2 || many[0].String() != "1.005" || many[1].String() != "2.675" || null != nil || set == nil || set.String() != "0.1" {
		t.Errorf("array %v, NULL %v, pointer %v", many, null, set)
	}
	var d decimal.Decimal
	if err := pool.QueryRow(ctx, "SELECT NULL::numeric").Scan(&d); err == nil {
		t.Error("NULL into a decimal.Decimal: no error")
	}
	if err := pool.QueryRow(ctx, "SELECT 'NaN'::numeric").Scan(&d); err == nil {
		t.Error("NaN into a decimal.Decimal: no error")
	}
	var sum decimal.Decimal
	if err := pool.QueryRow(ctx, "SELECT $1::numeric + $2::numeric", decimal.RequireFromString("2380.24"), decimal.RequireFromString("3405.76")).Scan(&sum); err != nil ||
		sum.String() != "5786" {
		t.Errorf("written and summed: %v %v", sum, err)
	}
}

// The int64 decoding of small numerics gives exactly pgx's coefficient and
// exponent for PostgreSQL's own bytes: every scale, trailing zeros, signs,
// the four-digit limit and beyond it (where pgx's plan decodes).
func TestDecimalSmallDecodingIsPgx(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	rows, err := pool.Query(ctx, `SELECT v::text, numeric_send(v) FROM (
		SELECT round(((random() - 0.5) * 10 ^ (random() * 20)::int)::numeric, (random() * 20)::int - 4) AS v FROM generate_series(1, 20000)
		UNION ALL SELECT unnest(ARRAY[0, 0.0, -0.000, 12000, 1000.0000000000000000, 24000.5, 1500000, 10000, 100000000, 9999999999999999,
			99999999999999999999, 0.0001, 0.00010, 1e-30, -1e20, 292.275, 6263.345000, 1.005, 2.675, 123456789012.345678,
			9223372036854775807, 922337203685477580.7, -9223372036854775808]::numeric[])) x`, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	fast, n := 0, 0
	for rows.Next() {
		var text string
		var raw []byte
		if err := rows.Scan(&text, &raw); err != nil {
			t.Fatal(err)
		}
		var viaPgx pgtype.Numeric
		if err := pgtype.NewMap().PlanScan(pgtype.NumericOID, pgx.BinaryFormatCode, &viaPgx).Scan(raw, &viaPgx); err != nil {
			t.Fatal(err)
		}
		want := decimal.NewFromBigInt(viaPgx.Int, viaPgx.Exp)
		n++
		got, ok := db.DecodeSmallNumeric(raw)
		if !ok {
			continue
		}
		fast++
		if got.String() != want.String() || got.Exponent() != want.Exponent() || got.Coefficient().Cmp(want.Coefficient()) != 0 || !got.Equal(decimal.RequireFromString(text)) {
			t.Fatalf("%s: %s (coefficient %s, exponent %d), pgx %s (%s, %d)", text, got, got.Coefficient(), got.Exponent(), want, want.Coefficient(), want.Exponent())
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fast < n/2 || fast == n {
		t.Fatalf("%d of %d values decoded in int64: the test must cover both paths", fast, n)
	}
}
