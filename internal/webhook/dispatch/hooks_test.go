package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
)

// A webhook through its operations: the tenant's limit, switched off and on
// with the reason naming who did it, a new secret, and gone once deleted.
func TestWebhookOperations(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	admin := rbac.Actor{TenantID: f.tenant, Subject: "auth0|admin"}
	create := func(i int, active *bool) (w dbsqlc.Webhook, err error) {
		err = db.InTenant(ctx, f.pool, f.tenant, func(tx pgx.Tx) (err error) {
			w, err = f.d.CreateWebhook(ctx, tx, admin, dispatch.WebhookInput{
				URL: fmt.Sprintf("https://hooks.example.com/%d", i), Events: []string{outbox.InitiativeCreated}, Secret: testSecret, Active: active,
			})
			return err
		})
		return w, err
	}

	off := false
	first, err := create(0, &off)
	if err != nil || first.Active || first.DisabledReason == nil || *first.DisabledReason != "created inactive by auth0|admin" || first.SecretHint != "****6789" {
		t.Fatalf("created inactive: %+v, %v", first, err)
	}
	for i := 1; i < dispatch.MaxWebhooks; i++ {
		if _, err := create(i, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := create(dispatch.MaxWebhooks, nil); !errors.Is(err, dispatch.ErrWebhookLimit) {
		t.Fatalf("a webhook beyond the limit: %v, want ErrWebhookLimit", err)
	}

	change := func(ch dispatch.WebhookChange) (w dbsqlc.Webhook) {
		t.Helper()
		f.inTenant(func(tx pgx.Tx) error {
			locked, err := dispatch.LockWebhook(ctx, tx, f.tenant, first.ID)
			if err != nil {
				return err
			}
			w, err = f.d.UpdateWebhook(ctx, tx, admin, locked, ch)
			return err
		})
		return w
	}
	on, secret := true, "another-secret-abcdefWXYZ"
	if w := change(dispatch.WebhookChange{Active: &on, Secret: &secret}); !w.Active || w.DisabledAt != nil || w.DisabledReason != nil || w.SecretHint != "****WXYZ" {
		t.Fatalf("switched on with a new secret: %+v", w)
	}
	if w := change(dispatch.WebhookChange{Active: &off}); w.Active || w.DisabledReason == nil || *w.DisabledReason != "switched off by auth0|admin" {
		t.Fatalf("switched off: %+v", w)
	}

	f.inTenant(func(tx pgx.Tx) error {
		locked, err := dispatch.LockWebhook(ctx, tx, f.tenant, first.ID)
		if err != nil {
			return err
		}
		return dispatch.DeleteWebhook(ctx, tx, locked)
	})
	err = db.InTenant(ctx, f.pool, f.tenant, func(tx pgx.Tx) error {
		_, err := dispatch.LockWebhook(ctx, tx, f.tenant, first.ID)
		return err
	})
	if !errors.Is(err, dispatch.ErrWebhookNotFound) {
		t.Fatalf("the deleted webhook: %v, want ErrWebhookNotFound", err)
	}
}
