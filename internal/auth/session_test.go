package auth_test

import (
	"context"
	"errors"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/credential"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/user"
)

// A refresh token is used once: the next one works, the used one coming back
// ends the session, after which its newest token is refused too. A sign-in of
// a deactivated user begins nothing.
func TestSessionRefreshAndReuse(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	tenant := dbtest.NewTenant(t, pool, "starter")
	claims := &auth.Claims{Email: "ada@example.com", Name: "Ada", Roles: []string{rbac.RoleAnalyst},
		RegisteredClaims: jwt.RegisteredClaims{Subject: "auth0|ada"}}

	var first credential.Parsed
	var session dbsqlc.AuthSession
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) (err error) {
		session, first, err = auth.SignIn(ctx, tx, tenant, claims)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	refresh := func(presented credential.Parsed) (got auth.Refreshed, err error) {
		t.Helper()
		txErr := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			got, err = auth.Refresh(ctx, tx, presented)
			return nil // commit whatever it did: a reuse must end the session for good
		})
		if txErr != nil {
			t.Fatal(txErr)
		}
		return got, err
	}
	second, err := refresh(first)
	if err != nil || second.Subject != claims.Subject || second.Session.ID != session.ID || second.Next.Raw == first.Raw {
		t.Fatalf("first refresh: %+v, %v", second, err)
	}
	if _, err := refresh(first); !errors.Is(err, auth.ErrRefreshReused) {
		t.Fatalf("the used token again: %v, want ErrRefreshReused", err)
	}
	if _, err := refresh(second.Next); !errors.Is(err, auth.ErrRefreshRefused) {
		t.Fatalf("the newest token of the ended session: %v, want ErrRefreshRefused", err)
	}

	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		u, err := user.Provision(ctx, tx, tenant, claims.Subject, "", "")
		if err != nil {
			return err
		}
		_, err = db.Q.UserDeactivate(ctx, tx, dbsqlc.UserDeactivateParams{TenantID: tenant, ID: u.ID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	err = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		_, _, err := auth.SignIn(ctx, tx, tenant, claims)
		return err
	})
	if !errors.Is(err, auth.ErrUserDeactivated) {
		t.Fatalf("sign-in of a deactivated user: %v, want ErrUserDeactivated", err)
	}
}
