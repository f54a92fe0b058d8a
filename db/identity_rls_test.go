package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
)

// The identity tables (migration 00003) keep each tenant's rows, credentials
// and roles to that tenant (the catalog test proves their policies).
func TestIdentityTablesAreIsolated(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenantA := dbtest.NewTenant(t, pool, "starter")
	tenantB := dbtest.NewTenant(t, pool, "starter")

	tables := []string{"roles", "api_keys", "service_clients", "auth_sessions", "refresh_tokens"}
	sub := "user-a"
	err := db.InTenant(ctx, pool, tenantA, func(tx pgx.Tx) error {
		if _, err := db.Q.RoleCreate(ctx, tx, dbsqlc.RoleCreateParams{TenantID: tenantA, Name: "Secret", Permissions: []string{"initiatives:read"}}); err != nil {
			return err
		}
		u, err := db.Q.UserProvision(ctx, tx, dbsqlc.UserProvisionParams{TenantID: tenantA, Subject: &sub})
		if err != nil {
			return err
		}
		s, err := db.Q.SessionCreate(ctx, tx, dbsqlc.SessionCreateParams{TenantID: tenantA, UserID: u.ID, Roles: []string{}, Permissions: []string{}, ExpiresAt: time.Now().Add(time.Hour)})
		if err != nil {
			return err
		}
		if err := db.Q.RefreshTokenCreate(ctx, tx, dbsqlc.RefreshTokenCreateParams{TenantID: tenantA, SessionID: s.ID, PublicID: "r1", TokenHash: []byte{1}, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			return err
		}
		if _, err := db.Q.APIKeyCreate(ctx, tx, dbsqlc.APIKeyCreateParams{TenantID: tenantA, PublicID: "k1", Name: "k", KeyHash: []byte{1}, Scopes: []string{"initiatives:read"}, CreatedBy: sub, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			return err
		}
		_, err = db.Q.ServiceClientCreate(ctx, tx, dbsqlc.ServiceClientCreateParams{TenantID: tenantA, ClientID: "c1", Name: "c", SecretHash: []byte{1}, Roles: []string{}, Permissions: []string{}, CreatedBy: sub})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.InTenant(ctx, pool, tenantB, func(tx pgx.Tx) error {
		for _, table := range tables {
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				return err
			}
			if n != 0 {
				t.Errorf("tenant B sees %d of A's rows in %s", n, table)
			}
		}
		// Lookups by credential id find nothing in the wrong tenant.
		if _, err := db.Q.APIKeyGetByPublicID(ctx, tx, dbsqlc.APIKeyGetByPublicIDParams{TenantID: tenantA, PublicID: "k1"}); !db.IsNotFound(err) {
			t.Errorf("api key of A found from B: %v", err)
		}
		perms, err := db.Q.RolePermissions(ctx, tx, dbsqlc.RolePermissionsParams{TenantID: tenantA, Names: []string{"Secret"}})
		if err != nil || len(perms) != 0 {
			t.Errorf("role of A grants %v in B (%v)", perms, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
