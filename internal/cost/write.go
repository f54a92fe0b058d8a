package cost

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/validation"
)

// Why a cost write failed, besides validation.Errors, ErrLimitReached and ErrInitiativeArchived.
var (
	ErrNotFound           = errors.New("no such cost in this initiative")
	ErrInitiativeNotFound = errors.New("no such initiative")
)

// Actor is who writes: the tenant (costs record no author).
type Actor struct {
	TenantID uuid.UUID
}

// Precondition checks the version (updated_at) of the cost a write holds
// locked, before it changes it (an If-Match); nil checks nothing.
type Precondition func(version time.Time) error

// DeleteCost deletes cost id of initiative initiativeID.
func DeleteCost(ctx context.Context, tx pgx.Tx, actor Actor, initiativeID, id uuid.UUID, check Precondition) error {
	in, err := lockInitiative(ctx, tx, actor, initiativeID, Fields{})
	if err != nil {
		return err
	}
	stored, err := lockCost(ctx, tx, in, id, check)
	if err != nil {
		return err
	}
	return db.Q.CostDelete(ctx, tx, dbsqlc.CostDeleteParams{TenantID: in.TenantID, ID: stored.ID})
}

// lockInitiative finds the initiative of a cost write: locked (the cost limit
// counts under the lock), writable, and the one the body's initiative_id
// names if it sends one (a cost never moves between initiatives).
func lockInitiative(ctx context.Context, tx pgx.Tx, actor Actor, id uuid.UUID, f Fields) (dbsqlc.Initiative, error) {
	in, err := db.Q.InitiativeGetForUpdate(ctx, tx, dbsqlc.InitiativeGetForUpdateParams{TenantID: actor.TenantID, ID: id})
	if db.IsNotFound(err) {
		return in, ErrInitiativeNotFound
	} else if err != nil {
		return in, err
	}
	if f.InitiativeID != nil && *f.InitiativeID != in.ID.String() {
		return in, validation.New("initiative_id", validation.CodeInvalidValue, "a cost belongs to the initiative of its path and cannot move")
	}
	return in, CheckWritable(initiative.Status(in.Status))
}

// lockCost finds a cost of the initiative, locked for update: a cost of
// another initiative (or tenant) is not found.
func lockCost(ctx context.Context, tx pgx.Tx, in dbsqlc.Initiative, id uuid.UUID, check Precondition) (dbsqlc.InitiativeCost, error) {
	row, err := db.Q.CostGetForUpdate(ctx, tx, dbsqlc.CostGetForUpdateParams{TenantID: in.TenantID, InitiativeID: in.ID, ID: id})
	if db.IsNotFound(err) {
		return row, ErrNotFound
	} else if err != nil {
		return row, err
	}
	if check != nil {
		return row, check(row.UpdatedAt)
	}
	return row, nil
}
