package dispatch

// The operations on a tenant's webhooks: create, change, delete. A secret is
// sealed for its webhook (tenant and id are its associated data), and only its
// last 4 characters are kept in clear, as the hint.

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/secretbox"
)

// MaxWebhooks bounds a tenant's webhooks (spec section 8).
const MaxWebhooks = 20

// ErrWebhookLimit refuses a webhook beyond MaxWebhooks.
var ErrWebhookLimit = fmt.Errorf("the tenant has reached its limit of %d webhooks", MaxWebhooks)

// WebhookInput is a new webhook; Active nil means active.
type WebhookInput struct {
	URL    string
	Events []string
	Secret string
	Active *bool
}

// CreateWebhook adds a webhook of the actor's tenant within MaxWebhooks
// (ErrWebhookLimit). One created inactive is disabled with a reason naming the actor.
func (d *Dispatcher) CreateWebhook(ctx context.Context, tx pgx.Tx, a rbac.Actor, in WebhookInput) (dbsqlc.Webhook, error) {
	if err := db.Q.WebhookLockTenantCreates(ctx, tx, a.TenantID); err != nil {
		return dbsqlc.Webhook{}, err
	}
	n, err := db.Q.WebhookCount(ctx, tx, dbsqlc.WebhookCountParams{TenantID: a.TenantID})
	if err != nil {
		return dbsqlc.Webhook{}, err
	}
	if n >= MaxWebhooks {
		return dbsqlc.Webhook{}, ErrWebhookLimit
	}
	id := uuid.New()
	sealed, err := d.SealSecret(a.TenantID, id, in.Secret)
	if err != nil {
		return dbsqlc.Webhook{}, err
	}
	params := dbsqlc.WebhookCreateParams{
		TenantID: a.TenantID, ID: id, URL: in.URL, Events: in.Events, SecretSealed: sealed,
		SecretHint: secretbox.Hint(in.Secret), Active: in.Active == nil || *in.Active,
	}
	if !params.Active {
		params.DisabledAt, params.DisabledReason = new(time.Now()), new("created inactive by "+a.Subject)
	}
	return db.Q.WebhookCreate(ctx, tx, params)
}

// LockWebhook finds a webhook of the tenant locked for update (ErrWebhookNotFound).
func LockWebhook(ctx context.Context, tx pgx.Tx, tenantID, id uuid.UUID) (dbsqlc.Webhook, error) {
	w, err := db.Q.WebhookGetForUpdate(ctx, tx, dbsqlc.WebhookGetForUpdateParams{TenantID: tenantID, ID: id})
	if db.IsNotFound(err) {
		return w, ErrWebhookNotFound
	}
	return w, err
}

// WebhookChange is a change of a webhook; nil fields keep their value.
type WebhookChange struct {
	URL    *string
	Events []string
	Secret *string
	Active *bool
}

// UpdateWebhook changes the locked webhook (LockWebhook). Switching it on
// clears disabled_at and disabled_reason; switching it off records a reason
// naming the actor.
func (d *Dispatcher) UpdateWebhook(ctx context.Context, tx pgx.Tx, a rbac.Actor, locked dbsqlc.Webhook, ch WebhookChange) (dbsqlc.Webhook, error) {
	params := dbsqlc.WebhookUpdateParams{
		TenantID: locked.TenantID, ID: locked.ID, URL: locked.URL, Events: locked.Events, SecretSealed: locked.SecretSealed, SecretHint: locked.SecretHint,
		Active: locked.Active, DisabledAt: locked.DisabledAt, DisabledReason: locked.DisabledReason,
	}
	if ch.URL != nil {
		params.URL = *ch.URL
	}
	if ch.Events != nil {
		params.Events = ch.Events
	}
	if ch.Secret != nil {
		var err error
		if params.SecretSealed, err = d.SealSecret(locked.TenantID, locked.ID, *ch.Secret); err != nil {
			return dbsqlc.Webhook{}, err
		}
		params.SecretHint = secretbox.Hint(*ch.Secret)
	}
	if ch.Active != nil && *ch.Active != locked.Active {
		params.Active = *ch.Active
		if params.Active {
			params.DisabledAt, params.DisabledReason = nil, nil
		} else {
			params.DisabledAt, params.DisabledReason = new(time.Now()), new("switched off by "+a.Subject)
		}
	}
	return db.Q.WebhookUpdate(ctx, tx, params)
}

// DeleteWebhook removes the locked webhook (LockWebhook).
func DeleteWebhook(ctx context.Context, tx pgx.Tx, locked dbsqlc.Webhook) error {
	n, err := db.Q.WebhookDelete(ctx, tx, dbsqlc.WebhookDeleteParams{TenantID: locked.TenantID, ID: locked.ID})
	if err == nil && n == 0 {
		return ErrWebhookNotFound
	}
	return err
}
