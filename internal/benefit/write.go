package benefit

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/initiative"
)

// Why a benefit write failed, besides validation.Errors, ErrLimitReached,
// ErrInitiativeArchived and ErrBasisLocked.
var (
	ErrNotFound           = errors.New("no such benefit")
	ErrInitiativeNotFound = errors.New("no such initiative")
	ErrNameTaken          = errors.New("the initiative already has a benefit of this name")
	ErrExternalKeyTaken   = errors.New("another benefit has this external_key")
)

// Precondition checks the version (updated_at) of the record a write holds
// locked, before it changes it (an If-Match); nil checks nothing.
type Precondition func(version time.Time) error

// Saved is a benefit as stored after a write, with its plan (none: the even spread).
type Saved struct {
	Benefit dbsqlc.Benefit
	Plan    []dbsqlc.BenefitPlanEntry
}

// CreatorOwns is who owns what a subject creates: the creator, unless the
// body names another owner. Every path that creates a benefit (the route, an
// import) asks it.
func CreatorOwns(creator string, sent *string) string {
	if sent != nil {
		return *sent
	}
	return creator
}

// DeleteBenefit deletes benefit id with its plan and actuals.
func DeleteBenefit(ctx context.Context, tx pgx.Tx, actor Actor, id uuid.UUID, check Precondition) error {
	locked, err := lockWritable(ctx, tx, actor, id, check)
	if err != nil {
		return err
	}
	return db.Q.BenefitDelete(ctx, tx, dbsqlc.BenefitDeleteParams{TenantID: actor.TenantID, ID: locked.Benefit.ID})
}

// lockWritable finds a benefit for a write: locked with its initiative,
// which must not be archived.
func lockWritable(ctx context.Context, tx pgx.Tx, actor Actor, id uuid.UUID, check Precondition) (dbsqlc.BenefitGetLockedRow, error) {
	row, err := db.Q.BenefitGetLocked(ctx, tx, dbsqlc.BenefitGetLockedParams{TenantID: actor.TenantID, ID: id})
	if db.IsNotFound(err) {
		return row, ErrNotFound
	} else if err != nil {
		return row, err
	}
	if check != nil {
		if err := check(row.Benefit.UpdatedAt); err != nil {
			return row, err
		}
	}
	return row, CheckWritable(initiative.Status(row.InitiativeStatus))
}

// uniqueError names the unique keys a benefit write may collide with.
func uniqueError(err error) error {
	switch {
	case db.IsUniqueViolation(err, "benefits_initiative_name"):
		return ErrNameTaken
	case db.IsUniqueViolation(err, "benefits_tenant_external_key"):
		return ErrExternalKeyTaken
	}
	return err
}
