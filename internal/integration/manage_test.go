package integration_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/secretbox"
)

// The lifecycle of an integration through its operations: the active limit,
// a taken name, an integration in error revived by a new secret, and a
// disconnection that is final; every write is an integration.changed event.
func TestIntegrationLifecycle(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	tenant := dbtest.NewTenant(t, pool, "starter")
	box, err := secretbox.New("")
	if err != nil {
		t.Fatal(err)
	}
	in := func(fn func(tx pgx.Tx) error) error { return db.InTenant(ctx, pool, tenant, fn) }
	manual := integration.Schedule{Frequency: integration.Manual, TimeZone: "UTC"}
	create := func(name string, state integration.State) (created dbsqlc.Integration, err error) {
		err = in(func(tx pgx.Tx) (err error) {
			created, err = integration.Create(ctx, tx, box, tenant, integration.Input{
				Provider: provider.HTTPFeed, Name: name, State: state, Config: map[string]any{}, Schedule: manual,
			})
			return err
		})
		return created, err
	}

	for i := range integration.MaxActive {
		if _, err := create(fmt.Sprintf("feed %d", i), integration.Active); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := create("one too many", integration.Active); !errors.Is(err, integration.ErrLimit) {
		t.Fatalf("an active integration beyond the limit: %v, want ErrLimit", err)
	}
	if _, err := create("feed 0", integration.Paused); !errors.Is(err, integration.ErrNameTaken) {
		t.Fatalf("a taken name: %v, want ErrNameTaken", err)
	}
	paused, err := create("paused feed", integration.Paused)
	if err != nil {
		t.Fatal(err)
	}

	// In error (a provider refused its token), it goes back to active only with room for it.
	if err := in(func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE integrations SET state = 'error', last_error = 'needs_reauth' WHERE id = $1`, paused.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	update := func(ch integration.Change) (updated dbsqlc.Integration, err error) {
		err = in(func(tx pgx.Tx) error {
			locked, err := integration.LockForChange(ctx, tx, tenant, paused.ID)
			if err != nil {
				return err
			}
			updated, err = integration.Update(ctx, tx, box, locked, ch)
			return err
		})
		return updated, err
	}
	newToken := integration.Change{Sent: provider.Credentials{APIToken: "token-0002"}, Secrets: provider.Credentials{APIToken: "token-0002"}}
	if _, err := update(newToken); !errors.Is(err, integration.ErrLimit) {
		t.Fatalf("reviving beyond the limit: %v, want ErrLimit", err)
	}
	if err := in(func(tx pgx.Tx) error {
		locked, err := integration.Lock(ctx, tx, tenant, mustFind(ctx, t, tx, tenant, "feed 0"))
		if err != nil {
			return err
		}
		return integration.Disconnect(ctx, tx, locked)
	}); err != nil {
		t.Fatal(err)
	}
	revived, err := update(newToken)
	if err != nil || integration.State(revived.State) != integration.Active || revived.LastError != nil {
		t.Fatalf("a new secret for an integration in error: %s %v, %v; want active without last_error", revived.State, revived.LastError, err)
	}

	// Disconnected is final: no change, and disconnecting again writes nothing.
	if err := in(func(tx pgx.Tx) error {
		locked, err := integration.Lock(ctx, tx, tenant, paused.ID)
		if err != nil {
			return err
		}
		if err := integration.Disconnect(ctx, tx, locked); err != nil {
			return err
		}
		again, err := integration.Lock(ctx, tx, tenant, paused.ID)
		if err != nil {
			return err
		}
		return integration.Disconnect(ctx, tx, again)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := update(integration.Change{}); !errors.Is(err, integration.ErrDisconnected) {
		t.Fatalf("changing a disconnected integration: %v, want ErrDisconnected", err)
	}

	var changed int
	if err := in(func(tx pgx.Tx) error {
		events, err := db.Q.OutboxListByTenant(ctx, tx, tenant)
		for _, e := range events {
			if e.Type == integration.EventChanged {
				changed++
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// 11 created, 1 disconnected to make room, 1 revived, 1 disconnected (the second is a no-op).
	if want := integration.MaxActive + 1 + 3; changed != want {
		t.Fatalf("%d %s events, want %d", changed, integration.EventChanged, want)
	}
}

// mustFind is the id of the tenant's integration of that name.
func mustFind(ctx context.Context, t *testing.T, tx pgx.Tx, tenant uuid.UUID, name string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	if err := tx.QueryRow(ctx, `SELECT id FROM integrations WHERE tenant_id = $1 AND name = $2`, tenant, name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
