package db_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/valuecase/valuecase/db/dbtest"
)

// Ids travel as PostgreSQL's binary uuid both ways, alone, in arrays, as
// nullable pointers and as NULL, and read back equal to what was sent.
func TestUUIDRoundTrip(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	a, b := uuid.New(), uuid.New()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan := fmt.Sprintf("%T", conn.Conn().TypeMap().PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, a))
	conn.Release()
	if plan != "db.encodeGoogleUUID" {
		t.Fatalf("a uuid.UUID is sent by %s, not as 16 bytes", plan)
	}
	var one uuid.UUID
	var many []uuid.UUID
	var text string
	if err := pool.QueryRow(ctx, "SELECT $1::uuid, $2::uuid[], $1::uuid::text", a, []uuid.UUID{a, b}).Scan(&one, &many, &text); err != nil {
		t.Fatal(err)
	}
	if one != a || !slices.Equal(many, []uuid.UUID{a, b}) || text != a.String() {
		t.Fatalf("sent %v, %v; read %v, %v, %q", a, []uuid.UUID{a, b}, one, many, text)
	}
	var nilID *uuid.UUID
	var null, set *uuid.UUID
	var isNull bool
	if err := pool.QueryRow(ctx, "SELECT $1::uuid IS NULL, $1::uuid, $2::uuid", nilID, &b).Scan(&isNull, &null, &set); err != nil {
		t.Fatal(err)
	}
	if !isNull || null != nil || set == nil || *set != b {
		t.Fatalf("nil pointer sent as NULL: %v; NULL read as %v; pointer read as %v", isNull, null, set)
	}
	zero := a // not the zero id, so the NULL must overwrite it
	if err := pool.QueryRow(ctx, "SELECT NULL::uuid").Scan(&zero); err != nil || zero != (uuid.UUID{}) {
		t.Fatalf("NULL into a uuid.UUID: %v %v (uuid.UUID's own Scan gives the zero id)", zero, err)
	}
}
