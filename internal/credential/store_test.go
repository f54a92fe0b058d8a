package credential_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/credential"
	"github.com/valuecase/valuecase/internal/rbac"
)

// A key is created within its creator's permissions, verified when presented,
// and refused once revoked; each refusal is a typed error.
func TestAPIKeyOperations(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	tenant := dbtest.NewTenant(t, pool, "starter")
	reader := rbac.Actor{TenantID: tenant, Subject: "auth0|reader", Permissions: rbac.Set{rbac.InitiativesRead: true}}
	in := func(fn func(tx pgx.Tx) error) error { return db.InTenant(ctx, pool, tenant, fn) }

	err := in(func(tx pgx.Tx) error {
		_, _, err := credential.CreateAPIKey(ctx, tx, reader, credential.APIKeyInput{Name: "ci", Scopes: []string{string(rbac.InitiativesWrite)}, Days: 1})
		return err
	})
	if g, ok := errors.AsType[*rbac.GrantError](err); !ok || g.What != "this key" || len(g.Missing) != 1 || g.Missing[0] != rbac.InitiativesWrite {
		t.Fatalf("a key with a scope its creator lacks: %v", err)
	}

	var key credential.Parsed
	var id uuid.UUID
	if err := in(func(tx pgx.Tx) error {
		row, k, err := credential.CreateAPIKey(ctx, tx, reader, credential.APIKeyInput{Name: "ci", Scopes: []string{string(rbac.InitiativesRead)}, Days: 1})
		key, id = k, row.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	verify := func(k credential.Parsed) error {
		return in(func(tx pgx.Tx) error {
			_, err := credential.VerifyAPIKey(ctx, tx, k)
			return err
		})
	}
	if err := verify(key); err != nil {
		t.Fatalf("the key as issued: %v", err)
	}
	wrong := key
	wrong.Raw = key.Raw[:len(key.Raw)-1] + "A"
	if wrong.Raw == key.Raw {
		wrong.Raw = key.Raw[:len(key.Raw)-1] + "B"
	}
	if err := verify(wrong); !errors.Is(err, credential.ErrUnknown) {
		t.Fatalf("the key with another secret: %v, want ErrUnknown", err)
	}
	revoke := func() error {
		return in(func(tx pgx.Tx) error { return credential.RevokeAPIKey(ctx, tx, tenant, id) })
	}
	if err := revoke(); err != nil {
		t.Fatal(err)
	}
	if err := verify(key); !errors.Is(err, credential.ErrRevoked) {
		t.Fatalf("the revoked key: %v, want ErrRevoked", err)
	}
	if err := revoke(); !errors.Is(err, credential.ErrAPIKeyNotFound) {
		t.Fatalf("revoking twice: %v, want ErrAPIKeyNotFound", err)
	}
}
