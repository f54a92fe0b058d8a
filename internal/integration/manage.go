package integration

// The operations on a tenant's integrations: create, change, disconnect. Each
// writes the integration.changed event its schedule follows.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/secretbox"
)

// Errors of the integration operations.
var (
	// ErrNotFound: no integration of that id in the tenant.
	ErrNotFound = errors.New("integration: no such integration")
	// ErrNameTaken: another integration of the tenant has the name.
	ErrNameTaken = errors.New("an integration of this name already exists")
)

// Input is a new integration, its config validated for its provider (see
// provider.Validate) and without the secrets, which come sealed from Secrets.
type Input struct {
	Provider string
	Name     string
	State    State // Active or Paused
	Config   map[string]any
	Token    string               // an access token sent, if any
	Secrets  provider.Credentials // every secret the integration holds
	Schedule Schedule
}

// Create adds an integration of the tenant: becoming active counts against
// MaxActive (ErrLimit), the name must be free (ErrNameTaken).
func Create(ctx context.Context, tx pgx.Tx, box *secretbox.Box, tenantID uuid.UUID, in Input) (dbsqlc.Integration, error) {
	if err := checkActiveLimit(ctx, tx, tenantID, Paused, in.State, nil); err != nil {
		return dbsqlc.Integration{}, err
	}
	id := uuid.New()
	params := dbsqlc.IntegrationCreateParams{TenantID: tenantID, ID: id, Provider: in.Provider, Name: in.Name, State: string(in.State),
		Frequency: string(in.Schedule.Frequency), ScheduleAt: optText(in.Schedule.At), DayOfWeek: optText(in.Schedule.DayOfWeek), Timezone: in.Schedule.TimeZone}
	var err error
	if params.Config, err = json.Marshal(in.Config); err != nil {
		return dbsqlc.Integration{}, err
	}
	if in.Token != "" {
		if params.TokenSealed, err = SealToken(box, tenantID, id, in.Token); err != nil {
			return dbsqlc.Integration{}, err
		}
		params.TokenHint = new(secretbox.Hint(in.Token))
	}
	if params.CredentialsSealed, err = SealCredentials(box, tenantID, id, in.Secrets); err != nil {
		return dbsqlc.Integration{}, err
	}
	created, err := db.Q.IntegrationCreate(ctx, tx, params)
	if db.IsUniqueViolation(err, "integrations_tenant_name") {
		return created, ErrNameTaken
	}
	if err != nil {
		return created, err
	}
	_, err = outbox.Write(ctx, tx, tenantID, EventChanged, ChangedEvent{ID: id.String()})
	return created, err
}

// checkActiveLimit refuses a change that would make more than MaxActive active.
func checkActiveLimit(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, from, to State, except *uuid.UUID) error {
	if to != Active || from == Active {
		return CheckTransition(from, to, 0)
	}
	if err := db.Q.IntegrationLockTenantCreates(ctx, tx, tenantID); err != nil {
		return err
	}
	n, err := db.Q.IntegrationCountActive(ctx, tx, dbsqlc.IntegrationCountActiveParams{TenantID: tenantID, ExceptID: except})
	if err != nil {
		return err
	}
	return CheckTransition(from, to, n)
}

// Lock finds an integration of the tenant locked for update (ErrNotFound).
func Lock(ctx context.Context, tx pgx.Tx, tenantID, id uuid.UUID) (dbsqlc.Integration, error) {
	in, err := db.Q.IntegrationGetForUpdate(ctx, tx, dbsqlc.IntegrationGetForUpdateParams{TenantID: tenantID, ID: id})
	if db.IsNotFound(err) {
		return in, ErrNotFound
	}
	return in, err
}

// LockForChange is Lock refusing a disconnected integration (ErrDisconnected),
// which no change revives.
func LockForChange(ctx context.Context, tx pgx.Tx, tenantID, id uuid.UUID) (dbsqlc.Integration, error) {
	in, err := Lock(ctx, tx, tenantID, id)
	if err == nil && State(in.State) == Disconnected {
		return in, ErrDisconnected
	}
	return in, err
}

// Change is a change of an integration; nil and empty fields keep their value.
type Change struct {
	Name     *string
	State    *State
	Config   map[string]any       // the whole config after the change (nil: unchanged)
	Sent     provider.Credentials // the secrets sent
	Secrets  provider.Credentials // every secret the integration holds after the change
	Cleared  []string             // secret keys erased
	Schedule *Schedule
}

// Update changes the locked integration (LockForChange). Without a state
// asked for, one in error goes back to active when a new secret comes;
// becoming active counts against MaxActive (ErrLimit); leaving error clears
// last_error. The name must stay free (ErrNameTaken).
func Update(ctx context.Context, tx pgx.Tx, box *secretbox.Box, locked dbsqlc.Integration, ch Change) (dbsqlc.Integration, error) {
	from, to := State(locked.State), State(locked.State)
	if ch.State != nil {
		to = *ch.State
	} else if from == Error && ch.Sent != (provider.Credentials{}) {
		to = Active
	}
	if err := checkActiveLimit(ctx, tx, locked.TenantID, from, to, &locked.ID); err != nil {
		return dbsqlc.Integration{}, err
	}
	params := dbsqlc.IntegrationUpdateParams{TenantID: locked.TenantID, ID: locked.ID, Name: locked.Name, Config: locked.Config, TokenSealed: locked.TokenSealed,
		TokenHint: locked.TokenHint, CredentialsSealed: locked.CredentialsSealed, TokenExpiresAt: locked.TokenExpiresAt, Frequency: locked.Frequency,
		ScheduleAt: locked.ScheduleAt, DayOfWeek: locked.DayOfWeek, Timezone: locked.Timezone, State: string(to), LastError: locked.LastError}
	if to != Error {
		params.LastError = nil
	}
	if ch.Name != nil {
		params.Name = *ch.Name
	}
	var err error
	if ch.Config != nil {
		if params.Config, err = json.Marshal(ch.Config); err != nil {
			return dbsqlc.Integration{}, err
		}
	}
	if ch.Sent.AccessToken != "" {
		if params.TokenSealed, err = SealToken(box, locked.TenantID, locked.ID, ch.Sent.AccessToken); err != nil {
			return dbsqlc.Integration{}, err
		}
		params.TokenHint, params.TokenExpiresAt = new(secretbox.Hint(ch.Sent.AccessToken)), nil
	}
	if slices.Contains(ch.Cleared, provider.SecretKey) {
		params.TokenSealed, params.TokenHint, params.TokenExpiresAt = nil, nil, nil
	}
	if rest := ch.Sent; (rest != provider.Credentials{AccessToken: rest.AccessToken}) || slices.ContainsFunc(ch.Cleared, func(k string) bool { return k != provider.SecretKey }) {
		if params.CredentialsSealed, err = SealCredentials(box, locked.TenantID, locked.ID, ch.Secrets); err != nil {
			return dbsqlc.Integration{}, err
		}
	}
	if ch.Schedule != nil {
		params.Frequency, params.ScheduleAt, params.DayOfWeek, params.Timezone = string(ch.Schedule.Frequency), optText(ch.Schedule.At), optText(ch.Schedule.DayOfWeek), ch.Schedule.TimeZone
	}
	updated, err := db.Q.IntegrationUpdate(ctx, tx, params)
	if db.IsUniqueViolation(err, "integrations_tenant_name") {
		return updated, ErrNameTaken
	}
	if err != nil {
		return updated, err
	}
	_, err = outbox.Write(ctx, tx, locked.TenantID, EventChanged, ChangedEvent{ID: locked.ID.String()})
	return updated, err
}

// Disconnect disconnects the locked integration (Lock): state disconnected,
// token erased, schedule deleted (by the event's handler). The record and its
// sync history stay. Disconnecting again changes nothing.
func Disconnect(ctx context.Context, tx pgx.Tx, locked dbsqlc.Integration) error {
	if State(locked.State) == Disconnected {
		return nil
	}
	if _, err := db.Q.IntegrationDisconnect(ctx, tx, dbsqlc.IntegrationDisconnectParams{TenantID: locked.TenantID, ID: locked.ID}); err != nil {
		return err
	}
	_, err := outbox.Write(ctx, tx, locked.TenantID, EventChanged, ChangedEvent{ID: locked.ID.String()})
	return err
}

func optText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
