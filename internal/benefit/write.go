package benefit

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/validation"
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

// CreateBenefit creates the benefit of a create body (read by ReadFields
// with full and create) in its initiative, locked so the limit counts under the lock.
func CreateBenefit(ctx context.Context, tx pgx.Tx, actor Actor, f Fields) (Saved, error) {
	initiativeID, err := uuid.Parse(*f.InitiativeID)
	if err != nil {
		return Saved{}, ErrInitiativeNotFound
	}
	in, err := db.Q.InitiativeGetForUpdate(ctx, tx, dbsqlc.InitiativeGetForUpdateParams{TenantID: actor.TenantID, ID: initiativeID})
	if db.IsNotFound(err) {
		return Saved{}, ErrInitiativeNotFound
	} else if err != nil {
		return Saved{}, err
	}
	if err := CheckWritable(initiative.Status(in.Status)); err != nil {
		return Saved{}, err
	}
	def := f.Definition(dbsqlc.Benefit{}, nil, true)
	plan, err := CheckDefinition(def)
	if err != nil {
		return Saved{}, err
	}
	n, err := db.Q.BenefitCountByInitiative(ctx, tx, dbsqlc.BenefitCountByInitiativeParams{TenantID: actor.TenantID, InitiativeID: in.ID})
	if err != nil {
		return Saved{}, err
	}
	if err := CheckCanAdd(int(n)); err != nil {
		return Saved{}, err
	}
	row, err := db.Q.BenefitCreate(ctx, tx, dbsqlc.BenefitCreateParams{
		TenantID: actor.TenantID, InitiativeID: in.ID, Name: *f.Name, Description: deref(f.Description),
		Category: string(def.Category), ExpectedValue: money.FromInput(def.ExpectedValue), Currency: noneIfBlank(&def.Currency),
		Unit: string(def.Unit), MeasurementFrequency: string(def.Frequency), ExpectedStartDate: def.Start,
		ExpectedEndDate: def.End, Status: string(def.Status), OwnerID: CreatorOwns(actor.Subject, f.OwnerID), ExternalKey: f.ExternalKey,
	})
	if err := uniqueError(err); err != nil {
		return Saved{}, err
	}
	stored, err := savePlan(ctx, tx, row, plan)
	return Saved{Benefit: row, Plan: stored}, err
}

// UpdateBenefit is PUT (replace: description, currency, end date and plan
// cleared unless sent; status and owner kept unless sent) and PATCH (only the
// fields sent change; null clears the optional ones) of benefit id.
func UpdateBenefit(ctx context.Context, tx pgx.Tx, actor Actor, id uuid.UUID, f Fields, replace bool, check Precondition) (Saved, error) {
	locked, err := lockWritable(ctx, tx, actor, id, check)
	if err != nil {
		return Saved{}, err
	}
	stored := locked.Benefit
	if f.InitiativeID != nil && *f.InitiativeID != stored.InitiativeID.String() {
		return Saved{}, validation.New("initiative_id", validation.CodeInvalidValue, "a benefit belongs to its initiative and cannot move")
	}
	plans, err := db.Q.BenefitPlanList(ctx, tx, dbsqlc.BenefitPlanListParams{TenantID: actor.TenantID, BenefitIds: []uuid.UUID{stored.ID}})
	if err != nil {
		return Saved{}, err
	}
	def := f.Definition(stored, plans, replace)
	plan, err := CheckDefinition(def)
	if err != nil {
		return Saved{}, err
	}
	var firstActual *finance.Month
	if first, err := db.Q.ActualFirstPeriod(ctx, tx, dbsqlc.ActualFirstPeriodParams{TenantID: stored.TenantID, BenefitID: stored.ID}); err == nil {
		firstActual = new(finance.MonthOfTime(first))
	} else if !db.IsNotFound(err) {
		return Saved{}, err
	}
	was := Basis{Unit: Unit(stored.Unit), Currency: deref(stored.Currency), Frequency: Frequency(stored.MeasurementFrequency), Start: stored.ExpectedStartDate}
	next := Basis{Unit: def.Unit, Currency: def.Currency, Frequency: def.Frequency, Start: def.Start}
	if err := CheckRedefinition(was, next, firstActual); err != nil {
		return Saved{}, err
	}
	name, description, owner, externalKey := stored.Name, stored.Description, stored.OwnerID, stored.ExternalKey
	if f.Name != nil {
		name = *f.Name
	}
	if replace || f.Has["description"] {
		description = deref(f.Description)
	}
	if f.OwnerID != nil {
		owner = *f.OwnerID
	}
	if replace || f.Has["external_key"] {
		externalKey = f.ExternalKey
	}
	row, err := db.Q.BenefitUpdate(ctx, tx, dbsqlc.BenefitUpdateParams{
		TenantID: stored.TenantID, ID: stored.ID, Name: name, Description: description,
		Category: string(def.Category), ExpectedValue: money.FromInput(def.ExpectedValue), Currency: noneIfBlank(&def.Currency),
		Unit: string(def.Unit), MeasurementFrequency: string(def.Frequency), ExpectedStartDate: def.Start,
		ExpectedEndDate: def.End, Status: string(def.Status), OwnerID: owner, ExternalKey: externalKey,
	})
	if err := uniqueError(err); err != nil {
		return Saved{}, err
	}
	if replace || f.Has["plan"] {
		plans, err = savePlan(ctx, tx, row, plan)
	}
	return Saved{Benefit: row, Plan: plans}, err
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

// savePlan replaces the stored plan with the checked one (none: the spread).
func savePlan(ctx context.Context, tx pgx.Tx, b dbsqlc.Benefit, plan []PlannedPeriod) ([]dbsqlc.BenefitPlanEntry, error) {
	p := dbsqlc.BenefitPlanReplaceParams{TenantID: b.TenantID, BenefitID: b.ID, Periods: []time.Time{}, Expected: []decimal.Decimal{}}
	out := []dbsqlc.BenefitPlanEntry{}
	for _, e := range plan {
		p.Periods = append(p.Periods, e.Period.FirstDay())
		p.Expected = append(p.Expected, money.FromInput(e.Expected))
		out = append(out, dbsqlc.BenefitPlanEntry{TenantID: b.TenantID, BenefitID: b.ID, Period: e.Period.FirstDay(), Expected: money.FromInput(e.Expected)})
	}
	return out, db.Q.BenefitPlanReplace(ctx, tx, p)
}
