package bulk

// Importing benefits: a row is the body of POST /v1/benefits, read by the
// same benefit.ReadFields and checked by the same Fields.Definition and
// internal/benefit rules (the owner too: benefit.CreatorOwns); its key is
// initiative_id + name (compared case-insensitively, as the unique index
// does). An existing benefit is replaced as PUT /v1/benefits/{id} replaces it
// (plan included). Neither single route emits an event, so neither does the import.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
)

type benefitKey struct {
	initiative uuid.UUID
	name       string // lower case
}

// benefitRow is one import row on its way through the checks.
type benefitRow struct {
	initiativeID uuid.UUID
	f            benefit.Fields
	key          benefitKey
}

// ImportBenefits writes a page of benefits rows.
func ImportBenefits(ctx context.Context, tx pgx.Tx, a Actor, o Options, records []Record, offset int) ([]Result, error) {
	results, fields, initiativeIDs, initiatives, err := InitiativeRows(ctx, tx, a.TenantID, records, offset,
		func(b *input.Object) benefit.Fields { return benefit.ReadFields(b, true, true) }, func(f benefit.Fields) *string { return f.InitiativeID }, benefit.CheckWritable)
	if err != nil {
		return nil, err
	}
	rows := make([]benefitRow, len(records))
	for i := range rows {
		rows[i].f, rows[i].initiativeID = fields[i], initiativeIDs[i]
	}
	firstOf := map[benefitKey]int{}
	firstExternal := map[string]int{}
	var externalKeys []string
	var keyInitiatives []uuid.UUID
	var keyNames []string
	var keyRows []int
	for i := range rows {
		if results[i].Status == Failed {
			continue
		}
		if _, err := benefit.CheckDefinition(rows[i].f.Definition(dbsqlc.Benefit{}, nil, true)); err != nil {
			results[i].Fail(RowErrors(nil, err))
			continue
		}
		rows[i].key = benefitKey{rows[i].initiativeID, strings.ToLower(*rows[i].f.Name)}
		if j, dup := firstOf[rows[i].key]; dup {
			results[i].Fail([]FieldError{{Field: "name", Code: "duplicate",
				Message: fmt.Sprintf("row %d already has this name in this initiative (names compare case-insensitively)", offset+j)}})
			continue
		}
		if k := rows[i].f.ExternalKey; k != nil {
			if j, dup := firstExternal[*k]; dup {
				results[i].Fail([]FieldError{{Field: "external_key", Code: "duplicate",
					Message: fmt.Sprintf("row %d already has this external_key", offset+j)}})
				continue
			}
			firstExternal[*k] = i
			externalKeys = append(externalKeys, *k)
		}
		firstOf[rows[i].key] = i
		keyInitiatives, keyNames, keyRows = append(keyInitiatives, rows[i].initiativeID), append(keyNames, *rows[i].f.Name), append(keyRows, i)
	}
	// The benefits already holding an external key of the import: a row may keep its own benefit's key, not take another's.
	externalHolder := map[string]uuid.UUID{}
	if len(externalKeys) > 0 {
		held, err := db.Q.BulkBenefitsByExternalKey(ctx, tx, dbsqlc.BulkBenefitsByExternalKeyParams{TenantID: a.TenantID, ExternalKeys: externalKeys})
		if err != nil {
			return nil, err
		}
		for _, h := range held {
			externalHolder[h.ExternalKey] = h.ID
		}
	}
	// 3. What is stored at those keys (with its plan and first actual) decides created, updated or unchanged.
	existing := map[int]dbsqlc.BulkBenefitsExistingRow{} // by row
	plans := map[uuid.UUID][]dbsqlc.BenefitPlanEntry{}
	if len(keyInitiatives) > 0 {
		list, err := db.Q.BulkBenefitsExisting(ctx, tx, dbsqlc.BulkBenefitsExistingParams{TenantID: a.TenantID, InitiativeIds: keyInitiatives, Names: keyNames})
		if err != nil {
			return nil, err
		}
		ids := make([]uuid.UUID, len(list))
		for k, e := range list {
			existing[keyRows[e.KeyN-1]], ids[k] = e, e.Benefit.ID
		}
		if len(ids) > 0 {
			entries, err := db.Q.BenefitPlanList(ctx, tx, dbsqlc.BenefitPlanListParams{TenantID: a.TenantID, BenefitIds: ids})
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				plans[e.BenefitID] = append(plans[e.BenefitID], e)
			}
		}
	}
	var ins dbsqlc.BulkBenefitsInsertParams
	var upd dbsqlc.BulkBenefitsUpdateParams
	plan := dbsqlc.BulkBenefitPlansReplaceParams{TenantID: a.TenantID, Replaced: []uuid.UUID{}, BenefitIds: []uuid.UUID{}, Periods: []time.Time{}, Expected: []decimal.Decimal{}}
	added := map[uuid.UUID]int{} // benefits this import creates, per initiative
	for i := range rows {
		if results[i].Status == Failed {
			continue
		}
		r := rows[i]
		e, stored := existing[i]
		if stored && o.Mode == Create {
			results[i].Fail([]FieldError{{Field: "name", Code: "already_exists",
				Message: "the initiative already has a benefit of this name; import with mode upsert to replace it"}})
			continue
		}
		if k := r.f.ExternalKey; k != nil {
			if holder, held := externalHolder[*k]; held && (!stored || holder != e.Benefit.ID) {
				results[i].Fail([]FieldError{{Field: "external_key", Code: "already_exists", Message: "another benefit has this external_key"}})
				continue
			}
		}
		// PUT's replace over the stored benefit (or create's over none).
		def := r.f.Definition(e.Benefit, plans[e.Benefit.ID], true)
		checked, err := benefit.CheckDefinition(def)
		if err != nil {
			results[i].Fail(RowErrors(nil, err))
			continue
		}
		next := dbsqlc.Benefit{Name: *r.f.Name, Description: deref(r.f.Description), Category: string(def.Category), ExpectedValue: money.FromInput(def.ExpectedValue),
			Currency: noneIfBlank(&def.Currency), Unit: string(def.Unit), MeasurementFrequency: string(def.Frequency),
			ExpectedStartDate: def.Start, ExpectedEndDate: def.End, Status: string(def.Status), ExternalKey: r.f.ExternalKey}
		var id uuid.UUID
		if stored {
			s := e.Benefit
			var first *finance.Month
			if e.FirstActual != "" {
				d, err := time.Parse(time.DateOnly, e.FirstActual)
				if err != nil {
					return nil, err
				}
				first = new(finance.MonthOfTime(d))
			}
			was := benefit.Basis{Unit: benefit.Unit(s.Unit), Currency: deref(s.Currency), Frequency: benefit.Frequency(s.MeasurementFrequency), Start: s.ExpectedStartDate}
			now := benefit.Basis{Unit: def.Unit, Currency: def.Currency, Frequency: def.Frequency, Start: def.Start}
			if err := benefit.CheckRedefinition(was, now, first); err != nil {
				results[i].Fail([]FieldError{{Field: basisField(was, now), Code: "conflict", Message: err.Error()}})
				continue
			}
			next.OwnerID = s.OwnerID
			if r.f.OwnerID != nil {
				next.OwnerID = *r.f.OwnerID
			}
			if sameBenefit(s, plans[s.ID], next, checked) {
				results[i].Status, results[i].ID = Unchanged, new(s.ID)
				continue
			}
			id = s.ID
			upd.Ids = append(upd.Ids, id)
			appendBenefitValues(&upd.Names, &upd.Descriptions, &upd.Categories, &upd.ExpectedValues, &upd.Currencies, &upd.Units,
				&upd.Frequencies, &upd.Starts, &upd.Ends, &upd.Statuses, &upd.OwnerIds, &upd.ExternalKeys, next)
			plan.Replaced = append(plan.Replaced, id)
			results[i].Status, results[i].ID = Updated, new(id)
		} else {
			in := initiatives[r.initiativeID]
			if err := benefit.CheckCanAdd(int(in.Benefits) + added[r.initiativeID]); err != nil {
				results[i].Fail([]FieldError{{Field: "initiative_id", Code: "conflict", Message: err.Error()}})
				continue
			}
			added[r.initiativeID]++
			next.OwnerID = benefit.CreatorOwns(a.Subject, r.f.OwnerID)
			id = uuid.New()
			ins.Ids, ins.InitiativeIds = append(ins.Ids, id), append(ins.InitiativeIds, r.initiativeID)
			appendBenefitValues(&ins.Names, &ins.Descriptions, &ins.Categories, &ins.ExpectedValues, &ins.Currencies, &ins.Units,
				&ins.Frequencies, &ins.Starts, &ins.Ends, &ins.Statuses, &ins.OwnerIds, &ins.ExternalKeys, next)
			results[i].Status = Created
			if !o.DryRun {
				results[i].ID = new(id)
			}
		}
		for _, p := range checked {
			plan.BenefitIds, plan.Periods, plan.Expected = append(plan.BenefitIds, id), append(plan.Periods, p.Period.FirstDay()), append(plan.Expected, money.FromInput(p.Expected))
		}
	}
	// 4. The writes: one statement each for the new benefits, the replaced ones and the plans.
	if len(ins.Ids) > 0 {
		ins.TenantID = a.TenantID
		if err := db.Q.BulkBenefitsInsert(ctx, tx, ins); err != nil {
			if db.IsUniqueViolation(err, "benefits_initiative_name") { // only if PostgreSQL's lower() pairs two names Go's does not
				return nil, &ConflictError{"two benefits of this import have the same name in one initiative"}
			}
			if db.IsUniqueViolation(err, "benefits_tenant_external_key") { // a key moved from a benefit the import updates to one it creates
				return nil, &ConflictError{"an external_key of this import moves between benefits; import the change in two steps"}
			}
			return nil, err
		}
	}
	if len(upd.Ids) > 0 {
		upd.TenantID = a.TenantID
		if err := db.Q.BulkBenefitsUpdate(ctx, tx, upd); err != nil {
			if db.IsUniqueViolation(err, "benefits_tenant_external_key") { // two benefits swap their keys
				return nil, &ConflictError{"an external_key of this import moves between benefits; import the change in two steps"}
			}
			return nil, err
		}
	}
	if len(plan.Replaced) > 0 || len(plan.BenefitIds) > 0 {
		if err := db.Q.BulkBenefitPlansReplace(ctx, tx, plan); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// basisField names the field a benefit.CheckRedefinition failure is about.
func basisField(was, next benefit.Basis) string {
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

// sameBenefit reports whether the stored benefit and plan already are what a row replaces them with.
func sameBenefit(s dbsqlc.Benefit, storedPlan []dbsqlc.BenefitPlanEntry, next dbsqlc.Benefit, plan []benefit.PlannedPeriod) bool {
	sameDate := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	if s.Name != next.Name || s.Description != next.Description || s.Category != next.Category || !s.ExpectedValue.Equal(next.ExpectedValue) ||
		deref(s.Currency) != deref(next.Currency) || s.Unit != next.Unit || s.MeasurementFrequency != next.MeasurementFrequency ||
		!s.ExpectedStartDate.Equal(next.ExpectedStartDate) || !sameDate(s.ExpectedEndDate, next.ExpectedEndDate) ||
		s.Status != next.Status || s.OwnerID != next.OwnerID || deref(s.ExternalKey) != deref(next.ExternalKey) || len(storedPlan) != len(plan) {
		return false
	}
	return !slices.ContainsFunc(plan, func(p benefit.PlannedPeriod) bool {
		return !slices.ContainsFunc(storedPlan, func(e dbsqlc.BenefitPlanEntry) bool {
			return e.Period.Equal(p.Period.FirstDay()) && e.Expected.Equal(money.FromInput(p.Expected))
		})
	})
}

// appendBenefitValues appends a benefit's writable columns to the bulk statement's arrays.
func appendBenefitValues(names, descriptions, categories *[]string, values *[]decimal.Decimal, currencies, units, frequencies *[]string,
	starts *[]time.Time, ends, statuses, owners, externalKeys *[]string, b dbsqlc.Benefit) {
	*names, *descriptions, *categories = append(*names, b.Name), append(*descriptions, b.Description), append(*categories, b.Category)
	*values, *currencies, *units = append(*values, b.ExpectedValue), append(*currencies, deref(b.Currency)), append(*units, b.Unit)
	*frequencies, *starts, *ends = append(*frequencies, b.MeasurementFrequency), append(*starts, b.ExpectedStartDate), append(*ends, DateText(b.ExpectedEndDate))
	*statuses, *owners, *externalKeys = append(*statuses, b.Status), append(*owners, b.OwnerID), append(*externalKeys, deref(b.ExternalKey))
}
