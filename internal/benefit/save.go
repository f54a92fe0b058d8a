package benefit

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/validation"
)

// Change is one benefit write: a new benefit of InitiativeID (ID nil), or a
// replacement (Replace: PUT and an import row) or a patch of benefit ID.
// Fields are read by ReadFields.
type Change struct {
	InitiativeID uuid.UUID // a new benefit's; ignored for an existing one
	ID           *uuid.UUID
	Fields       Fields
	Replace      bool
	Check        Precondition // of the stored benefit (If-Match); nil checks nothing
}

// Result is what a change did.
type Result int

const (
	Created Result = iota
	Updated
	Unchanged // the stored benefit and plan already were what the change makes them (Touch unset)
)

// SaveOptions are the choices of one batch.
type SaveOptions struct {
	// Touch writes a change that leaves a benefit as it was (a route's PUT
	// always moves updated_at); without it such a change is Unchanged.
	Touch bool
}

// SaveOutcome is what saving one change did: the benefit and plan as stored
// after it, or why it failed.
type SaveOutcome struct {
	Result Result
	Saved  Saved
	Err    error
}

// RedefinitionError is CheckRedefinition's refusal (ErrBasisLocked) with the
// field of the basis the change would alter.
type RedefinitionError struct {
	Field string
	Err   error
}

func (e *RedefinitionError) Error() string { return e.Err.Error() }
func (e *RedefinitionError) Unwrap() error { return e.Err }

// SaveBenefits is the one way benefits are created, replaced and patched: the
// routes (a batch of one) and a benefits import (a page, its rows matched to
// stored benefits by initiative and name) call it. Every change gets the same
// checks in the same order: the stored benefit (locked with its initiative)
// and its precondition, or the initiative of a new one (locked for update, so
// the limit counts under the lock); the initiative not archived and not
// changed; the definition; the basis fixed once actuals exist; at most
// MaxPerInitiative benefits. The owner of a new benefit is CreatorOwns's.
// The writes are one multi-row statement for the new benefits, one for the
// changed ones and one for their plans. A name or external key another
// benefit holds fails the batch with ErrNameTaken or ErrExternalKeyTaken (a
// caller of many changes checks their keys beforehand).
func SaveBenefits(ctx context.Context, tx pgx.Tx, actor Actor, changes []Change, opts SaveOptions) ([]SaveOutcome, error) {
	outcomes := make([]SaveOutcome, len(changes))
	var benefitIDs, initiativeIDs []uuid.UUID
	for _, ch := range changes {
		if ch.ID != nil {
			benefitIDs = append(benefitIDs, *ch.ID)
		} else if !slices.Contains(initiativeIDs, ch.InitiativeID) {
			initiativeIDs = append(initiativeIDs, ch.InitiativeID)
		}
	}
	stored, stamp, err := lockBenefits(ctx, tx, actor.TenantID, benefitIDs)
	if err != nil {
		return nil, err
	}
	plans := map[uuid.UUID][]dbsqlc.BenefitPlanEntry{}
	firstActual := map[uuid.UUID]finance.Month{}
	if len(benefitIDs) > 0 {
		entries, err := db.Q.BenefitPlanList(ctx, tx, dbsqlc.BenefitPlanListParams{TenantID: actor.TenantID, BenefitIds: benefitIDs})
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			plans[e.BenefitID] = append(plans[e.BenefitID], e)
		}
		firsts, err := db.Q.ActualFirstPeriods(ctx, tx, dbsqlc.ActualFirstPeriodsParams{TenantID: actor.TenantID, BenefitIds: benefitIDs})
		if err != nil {
			return nil, err
		}
		for _, f := range firsts {
			firstActual[f.BenefitID] = finance.MonthOfTime(f.FirstPeriod)
		}
	}
	initiatives := map[uuid.UUID]dbsqlc.BulkInitiativesLockedRow{}
	if len(initiativeIDs) > 0 {
		list, err := db.Q.BulkInitiativesLocked(ctx, tx, dbsqlc.BulkInitiativesLockedParams{TenantID: actor.TenantID, Ids: initiativeIDs})
		if err != nil {
			return nil, err
		}
		for _, l := range list {
			initiatives[l.ID], stamp = l, l.StampedAt
		}
	}
	var ins dbsqlc.BulkBenefitsInsertParams
	var upd dbsqlc.BulkBenefitsUpdateParams
	plan := dbsqlc.BulkBenefitPlansReplaceParams{TenantID: actor.TenantID, Replaced: []uuid.UUID{}, BenefitIds: []uuid.UUID{}, Periods: []time.Time{}, Expected: []decimal.Decimal{}}
	added := map[uuid.UUID]int{} // benefits this batch creates, per initiative
	for i, ch := range changes {
		var base dbsqlc.Benefit
		var status string
		if ch.ID != nil {
			l, ok := stored[*ch.ID]
			if !ok {
				outcomes[i].Err = ErrNotFound
				continue
			}
			if ch.Check != nil {
				if err := ch.Check(l.Benefit.UpdatedAt); err != nil {
					outcomes[i].Err = err
					continue
				}
			}
			base, status = l.Benefit, l.InitiativeStatus
		} else {
			in, ok := initiatives[ch.InitiativeID]
			if !ok {
				outcomes[i].Err = ErrInitiativeNotFound
				continue
			}
			base.TenantID, base.InitiativeID, status = actor.TenantID, in.ID, in.Status
		}
		if err := CheckWritable(initiative.Status(status)); err != nil {
			outcomes[i].Err = err
			continue
		}
		f := ch.Fields
		if ch.ID != nil && f.InitiativeID != nil && *f.InitiativeID != base.InitiativeID.String() {
			outcomes[i].Err = validation.New("initiative_id", validation.CodeInvalidValue, "a benefit belongs to its initiative and cannot move")
			continue
		}
		def := f.Definition(base, plans[base.ID], ch.Replace)
		checked, err := CheckDefinition(def)
		if err != nil {
			outcomes[i].Err = err
			continue
		}
		next := base
		next.Category, next.ExpectedValue, next.Currency = string(def.Category), money.FromInput(def.ExpectedValue), input.NoneIfBlank(&def.Currency)
		next.Unit, next.MeasurementFrequency, next.ExpectedStartDate = string(def.Unit), string(def.Frequency), def.Start
		next.ExpectedEndDate, next.Status, next.UpdatedAt = def.End, string(def.Status), stamp
		if f.Name != nil {
			next.Name = *f.Name
		}
		if ch.Replace || f.Has["description"] {
			next.Description = deref(f.Description)
		}
		if ch.Replace || f.Has["external_key"] {
			next.ExternalKey = f.ExternalKey
		}
		replacesPlan := ch.Replace || f.Has["plan"]
		entries := plans[base.ID]
		if replacesPlan {
			entries = planEntries(next, checked)
		}
		if ch.ID != nil {
			var first *finance.Month
			if m, ok := firstActual[base.ID]; ok {
				first = &m
			}
			was := Basis{Unit: Unit(base.Unit), Currency: deref(base.Currency), Frequency: Frequency(base.MeasurementFrequency), Start: base.ExpectedStartDate}
			now := Basis{Unit: def.Unit, Currency: def.Currency, Frequency: def.Frequency, Start: def.Start}
			if err := CheckRedefinition(was, now, first); err != nil {
				outcomes[i].Err = &RedefinitionError{Field: basisField(was, now), Err: err}
				continue
			}
			if f.OwnerID != nil {
				next.OwnerID = *f.OwnerID
			}
			if !opts.Touch && sameBenefit(base, plans[base.ID], next, entries) {
				outcomes[i] = SaveOutcome{Result: Unchanged, Saved: Saved{Benefit: base, Plan: plans[base.ID]}}
				continue
			}
			upd.Ids = append(upd.Ids, next.ID)
			appendValues(&upd.Names, &upd.Descriptions, &upd.Categories, &upd.ExpectedValues, &upd.Currencies, &upd.Units,
				&upd.Frequencies, &upd.Starts, &upd.Ends, &upd.Statuses, &upd.OwnerIds, &upd.ExternalKeys, next)
			outcomes[i].Result = Updated
		} else {
			in := initiatives[ch.InitiativeID]
			if err := CheckCanAdd(int(in.Benefits) + added[in.ID]); err != nil {
				outcomes[i].Err = err
				continue
			}
			added[in.ID]++
			next.ID, next.CreatedAt, next.OwnerID = uuid.New(), stamp, CreatorOwns(actor.Subject, f.OwnerID)
			entries = planEntries(next, checked)
			ins.Ids, ins.InitiativeIds = append(ins.Ids, next.ID), append(ins.InitiativeIds, next.InitiativeID)
			appendValues(&ins.Names, &ins.Descriptions, &ins.Categories, &ins.ExpectedValues, &ins.Currencies, &ins.Units,
				&ins.Frequencies, &ins.Starts, &ins.Ends, &ins.Statuses, &ins.OwnerIds, &ins.ExternalKeys, next)
			outcomes[i].Result = Created
		}
		if replacesPlan || ch.ID == nil {
			plan.Replaced = append(plan.Replaced, next.ID)
			for _, e := range entries {
				plan.BenefitIds, plan.Periods, plan.Expected = append(plan.BenefitIds, next.ID), append(plan.Periods, e.Period), append(plan.Expected, e.Expected)
			}
		}
		outcomes[i].Saved = Saved{Benefit: next, Plan: entries}
	}
	if len(ins.Ids) > 0 {
		ins.TenantID = actor.TenantID
		if err := db.Q.BulkBenefitsInsert(ctx, tx, ins); err != nil {
			return nil, uniqueError(err)
		}
	}
	if len(upd.Ids) > 0 {
		upd.TenantID = actor.TenantID
		if err := db.Q.BulkBenefitsUpdate(ctx, tx, upd); err != nil {
			return nil, uniqueError(err)
		}
	}
	if len(plan.Replaced) > 0 {
		if err := db.Q.BulkBenefitPlansReplace(ctx, tx, plan); err != nil {
			return nil, err
		}
	}
	return outcomes, nil
}

// planEntries are the stored rows of a checked plan.
func planEntries(b dbsqlc.Benefit, plan []PlannedPeriod) []dbsqlc.BenefitPlanEntry {
	out := []dbsqlc.BenefitPlanEntry{}
	for _, p := range plan {
		out = append(out, dbsqlc.BenefitPlanEntry{TenantID: b.TenantID, BenefitID: b.ID, Period: p.Period.FirstDay(), Expected: money.FromInput(p.Expected)})
	}
	return out
}

// basisField names the field a CheckRedefinition failure is about.
func basisField(was, next Basis) string {
	switch {
	case was.Unit != next.Unit:
		return "unit"
	case was.Currency != next.Currency:
		return "currency"
	case was.Frequency != next.Frequency:
		return "measurement_frequency"
	}
	return "expected_start_date"
}

// sameBenefit reports whether the stored benefit and plan already are what a change makes them.
func sameBenefit(s dbsqlc.Benefit, storedPlan []dbsqlc.BenefitPlanEntry, next dbsqlc.Benefit, plan []dbsqlc.BenefitPlanEntry) bool {
	sameDate := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	if s.Name != next.Name || s.Description != next.Description || s.Category != next.Category || !s.ExpectedValue.Equal(next.ExpectedValue) ||
		deref(s.Currency) != deref(next.Currency) || s.Unit != next.Unit || s.MeasurementFrequency != next.MeasurementFrequency ||
		!s.ExpectedStartDate.Equal(next.ExpectedStartDate) || !sameDate(s.ExpectedEndDate, next.ExpectedEndDate) ||
		s.Status != next.Status || s.OwnerID != next.OwnerID || deref(s.ExternalKey) != deref(next.ExternalKey) || len(storedPlan) != len(plan) {
		return false
	}
	return !slices.ContainsFunc(plan, func(p dbsqlc.BenefitPlanEntry) bool {
		return !slices.ContainsFunc(storedPlan, func(e dbsqlc.BenefitPlanEntry) bool {
			return e.Period.Equal(p.Period) && e.Expected.Equal(p.Expected)
		})
	})
}

// appendValues appends a benefit's writable columns to the bulk statement's arrays.
func appendValues(names, descriptions, categories *[]string, values *[]decimal.Decimal, currencies, units, frequencies *[]string,
	starts *[]time.Time, ends, statuses, owners, externalKeys *[]string, b dbsqlc.Benefit) {
	end := ""
	if b.ExpectedEndDate != nil {
		end = b.ExpectedEndDate.Format(time.DateOnly)
	}
	*names, *descriptions, *categories = append(*names, b.Name), append(*descriptions, b.Description), append(*categories, b.Category)
	*values, *currencies, *units = append(*values, b.ExpectedValue), append(*currencies, deref(b.Currency)), append(*units, b.Unit)
	*frequencies, *starts, *ends = append(*frequencies, b.MeasurementFrequency), append(*starts, b.ExpectedStartDate), append(*ends, end)
	*statuses, *owners, *externalKeys = append(*statuses, b.Status), append(*owners, b.OwnerID), append(*externalKeys, deref(b.ExternalKey))
}
