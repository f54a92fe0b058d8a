package db_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
)

// Every way of sending a first statement reports a database it cannot reach as
// ErrUnavailable (the API answers 503, not 500).
func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port that refuses once closed
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	pool, err := pgxpool.New(context.Background(), "postgres://valuecase@"+addr+"/valuecase?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx := context.Background()
	tenant := uuid.New()
	for name, exec := range map[string]func() error{
		"OneTrip": func() error {
			_, err := db.OneTrip(pool, tenant, false).Exec(ctx, "SELECT 1")
			return err
		},
		"OneTripSystem": func() error {
			_, err := db.OneTripSystem(pool, true).Exec(ctx, "SELECT 1")
			return err
		},
		"BeginTenantDeferred": func() error {
			_, err := db.BeginTenantDeferred(ctx, pool, tenant).Exec(ctx, "SELECT 1")
			return err
		},
		"BeginTenantReads": func() error {
			_, err := db.BeginTenantReads(ctx, pool, tenant).Exec(ctx, "SELECT 1")
			return err
		},
	} {
		if err := exec(); !errors.Is(err, db.ErrUnavailable) {
			t.Errorf("%s: %v; want ErrUnavailable", name, err)
		}
	}
}
