package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/secretbox"
)

// Eight syncs of one integration find its token refused at once, on separate connections as
// on separate workers: the token endpoint is called once, every sync gets the new token, and
// the row holds the new access token, its expiry and the rotated refresh token.
func TestTokensRefreshOncePerIntegration(t *testing.T) {
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	box, err := secretbox.New("")
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.New()
	old := provider.Credentials{AccessToken: "expired-access-0001", RefreshToken: "refresh-0001", ClientID: "client-0001", ClientSecret: "secret-0001"}
	ctx := context.Background()
	err = db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		p := dbsqlc.IntegrationCreateParams{TenantID: tenant, ID: id, Provider: "salesforce", Name: "Tokens", Config: json.RawMessage(`{}`),
			TokenHint: new("****0001"), Frequency: "manual", Timezone: "UTC", State: "active"}
		var err error
		if p.TokenSealed, err = integration.SealToken(box, tenant, id, old.AccessToken); err != nil {
			return err
		}
		if p.CredentialsSealed, err = integration.SealCredentials(box, tenant, id, old); err != nil {
			return err
		}
		_, err = db.Q.IntegrationCreate(ctx, tx, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	store := integration.Tokens{Pool: pool, Box: box, TenantID: tenant, ID: id}
	var grants atomic.Int32
	expires := time.Now().Add(30 * time.Minute).Truncate(time.Microsecond)
	grant := func(_ context.Context, cur provider.Credentials) (provider.Credentials, error) {
		grants.Add(1)
		if cur.RefreshToken != old.RefreshToken {
			return provider.Credentials{}, errors.New("the grant was given a refresh token that was already used")
		}
		time.Sleep(100 * time.Millisecond) // the token endpoint's round trip
		next := cur
		next.AccessToken, next.RefreshToken, next.ExpiresAt = "fresh-access-0002", "refresh-0002", expires
		return next, nil
	}
	var wg sync.WaitGroup
	got := make([]provider.Credentials, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Go(func() { got[i], errs[i] = store.Refresh(ctx, old.AccessToken, grant) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := grants.Load(); n != 1 {
		t.Fatalf("%d grants, want 1", n)
	}
	for _, c := range got {
		if c.AccessToken != "fresh-access-0002" {
			t.Fatalf("a sync got %q", c.AccessToken)
		}
	}
	var in dbsqlc.Integration
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		in, err = db.Q.IntegrationGet(ctx, tx, dbsqlc.IntegrationGetParams{TenantID: tenant, ID: id})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stored, err := integration.OpenCredentials(box, in)
	if err != nil {
		t.Fatal(err)
	}
	if stored.AccessToken != "fresh-access-0002" || stored.RefreshToken != "refresh-0002" || !stored.ExpiresAt.Equal(expires) || stored.ClientSecret != old.ClientSecret {
		t.Fatalf("stored %+v", stored)
	}
	if in.TokenHint == nil || *in.TokenHint == "****0001" {
		t.Fatalf("hint %v not the new token's", in.TokenHint)
	}
}
