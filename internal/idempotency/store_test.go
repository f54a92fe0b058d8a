package idempotency_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/idempotency"
)

// A key runs its request once and replays the stored answer after; another
// request under it is refused, and so is the same one while the first holds it.
func TestBeginFinishReplay(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	tenant := dbtest.NewTenant(t, pool, "starter")
	req := idempotency.Request{Method: "POST", Path: "/v1/initiatives", Hash: idempotency.Hash("POST", "/v1/initiatives", "auth0|ada", []byte(`{"name":"A"}`))}
	begin := func(tx pgx.Tx, r idempotency.Request) (idempotency.Action, idempotency.Answer, error) {
		return idempotency.Begin(ctx, tx, tenant, "key-1", r)
	}

	answer := idempotency.Answer{Status: 201, Headers: [][2]string{{"Location", "/v1/initiatives/1"}}, Body: []byte(`{"id":"1"}`)}
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		action, _, err := begin(tx, req)
		if err != nil || action != idempotency.Run {
			t.Fatalf("first use: %v, %v; want Run", action, err)
		}
		// While this transaction holds the key, the same request elsewhere is refused.
		if err := db.InTenant(ctx, pool, tenant, func(other pgx.Tx) error {
			_, _, err := begin(other, req)
			return err
		}); !errors.Is(err, idempotency.ErrInFlight) {
			t.Errorf("the same key while the first runs: %v, want ErrInFlight", err)
		}
		return idempotency.Finish(ctx, tx, tenant, "key-1", answer)
	}); err != nil {
		t.Fatal(err)
	}

	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		action, got, err := begin(tx, req)
		if err != nil || action != idempotency.Replay || got.Status != 201 || string(got.Body) != string(answer.Body) || !slices.Equal(got.Headers, answer.Headers) {
			t.Errorf("the same request again: %v %+v %v; want Replay of %+v", action, got, err, answer)
		}
		other := req
		other.Hash = idempotency.Hash("POST", "/v1/initiatives", "auth0|ada", []byte(`{"name":"B"}`))
		if _, _, err := begin(tx, other); !errors.Is(err, idempotency.ErrMismatch) {
			t.Errorf("another request under the key: %v, want ErrMismatch", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
