package api

// Bulk import and export of benefits: a row is the body of POST
// /v1/benefits, read by the same readBenefit and checked by the same
// benefitFields.definition and internal/benefit rules; its key is
// initiative_id + name (compared case-insensitively, as the unique index
// does). An existing benefit is replaced as PUT /v1/benefits/{id} replaces
// it (plan included). Neither single route emits an event, so neither does
// the import.

import (
	"context"
	"encoding/json"
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
	"github.com/valuecase/valuecase/internal/bulk"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
)

// benefitExportColumns are the fields of an exported benefit (id is read-only on import).
var benefitExportColumns = []string{"id", "initiative_id", "name", "description", "category", "expected_value", "currency", "unit",
	"measurement_frequency", "expected_start_date", "expected_end_date", "status", "owner_id", "plan", "external_key"}

type benefitKey struct {
	initiative uuid.UUID
	name       string // lower case
}

// benefitRow is one import row on its way through the checks.
type benefitRow struct {
	initiativeID uuid.UUID
	f            benefitFields
	key          benefitKey
}

func importBenefits(ctx context.Context, t pgx.Tx, a bulk.Actor, o bulk.Options, records []bulk.Record, offset int) ([]bulk.Result, error) {
	results, fields, initiativeIDs, initiatives, err := bulk.InitiativeRows(ctx, t, a.TenantID, records, offset,
		func(b *input.Object) benefitFields { return readBenefit(b, true, true) }, func(f benefitFields) *string { return f.initiativeID }, benefit.CheckWritable)
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
		if results[i].Status == bulk.Failed {
			continue
		}
		if _, err := benefit.CheckDefinition(rows[i].f.definition(dbsqlc.Benefit{}, nil, true)); err != nil {
			results[i].Fail(bulk.RowErrors(nil, err))
			continue
		}
		rows[i].key = benefitKey{rows[i].initiativeID, strings.ToLower(*rows[i].f.name)}
		if j, dup := firstOf[rows[i].key]; dup {
			results[i].Fail([]bulk.FieldError{{Field: "name", Code: "duplicate",
				Message: fmt.Sprintf("row %d already has this name in this initiative (names compare case-insensitively)", offset+j)}})
			continue
		}
		if k := rows[i].f.externalKey; k != nil {
			if j, dup := firstExternal[*k]; dup {
				results[i].Fail([]bulk.FieldError{{Field: "external_key", Code: "duplicate",
					Message: fmt.Sprintf("row %d already has this external_key", offset+j)}})
				continue
			}
			firstExternal[*k] = i
			externalKeys = append(externalKeys, *k)
		}
		firstOf[rows[i].key] = i
		keyInitiatives, keyNames, keyRows = append(keyInitiatives, rows[i].initiativeID), append(keyNames, *rows[i].f.name), append(keyRows, i)
	}
	// The benefits already holding an external key of the import: a row may keep its own benefit's key, not take another's.
	externalHolder := map[string]uuid.UUID{}
	if len(externalKeys) > 0 {
		held, err := db.Q.BulkBenefitsByExternalKey(ctx, t, dbsqlc.BulkBenefitsByExternalKeyParams{TenantID: a.TenantID, ExternalKeys: externalKeys})
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
		list, err := db.Q.BulkBenefitsExisting(ctx, t, dbsqlc.BulkBenefitsExistingParams{TenantID: a.TenantID, InitiativeIds: keyInitiatives, Names: keyNames})
		if err != nil {
			return nil, err
		}
		ids := make([]uuid.UUID, len(list))
		for k, e := range list {
			existing[keyRows[e.KeyN-1]], ids[k] = e, e.Benefit.ID
		}
		if len(ids) > 0 {
			entries, err := db.Q.BenefitPlanList(ctx, t, dbsqlc.BenefitPlanListParams{TenantID: a.TenantID, BenefitIds: ids})
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
		if results[i].Status == bulk.Failed {
			continue
		}
		r := rows[i]
		e, stored := existing[i]
		if stored && o.Mode == bulk.Create {
			results[i].Fail([]bulk.FieldError{{Field: "name", Code: "already_exists",
				Message: "the initiative already has a benefit of this name; import with mode upsert to replace it"}})
			continue
		}
		if k := r.f.externalKey; k != nil {
			if holder, held := externalHolder[*k]; held && (!stored || holder != e.Benefit.ID) {
				results[i].Fail([]bulk.FieldError{{Field: "external_key", Code: "already_exists", Message: "another benefit has this external_key"}})
				continue
			}
		}
		// PUT's replace over the stored benefit (or create's over none).
		def := r.f.definition(e.Benefit, plans[e.Benefit.ID], true)
		checked, err := benefit.CheckDefinition(def)
		if err != nil {
			results[i].Fail(bulk.RowErrors(nil, err))
			continue
		}
		next := dbsqlc.Benefit{Name: *r.f.name, Description: deref(r.f.description), Category: string(def.Category), ExpectedValue: money.FromInput(def.ExpectedValue),
			Currency: noneIfBlank(&def.Currency), Unit: string(def.Unit), MeasurementFrequency: string(def.Frequency),
			ExpectedStartDate: def.Start, ExpectedEndDate: def.End, Status: string(def.Status), OwnerID: a.Subject, ExternalKey: r.f.externalKey}
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
				results[i].Fail([]bulk.FieldError{{Field: basisField(was, now), Code: "conflict", Message: err.Error()}})
				continue
			}
			next.OwnerID = s.OwnerID
			if r.f.ownerID != nil {
				next.OwnerID = *r.f.ownerID
			}
			if sameBenefit(s, plans[s.ID], next, checked) {
				results[i].Status, results[i].ID = bulk.Unchanged, new(s.ID)
				continue
			}
			id = s.ID
			upd.Ids = append(upd.Ids, id)
			appendBenefitValues(&upd.Names, &upd.Descriptions, &upd.Categories, &upd.ExpectedValues, &upd.Currencies, &upd.Units,
				&upd.Frequencies, &upd.Starts, &upd.Ends, &upd.Statuses, &upd.OwnerIds, &upd.ExternalKeys, next)
			plan.Replaced = append(plan.Replaced, id)
			results[i].Status, results[i].ID = bulk.Updated, new(id)
		} else {
			in := initiatives[r.initiativeID]
			if err := benefit.CheckCanAdd(int(in.Benefits) + added[r.initiativeID]); err != nil {
				results[i].Fail([]bulk.FieldError{{Field: "initiative_id", Code: "conflict", Message: err.Error()}})
				continue
			}
			added[r.initiativeID]++
			if r.f.ownerID != nil { // the creator owns what they create unless told otherwise
				next.OwnerID = *r.f.ownerID
			}
			id = uuid.New()
			ins.Ids, ins.InitiativeIds = append(ins.Ids, id), append(ins.InitiativeIds, r.initiativeID)
			appendBenefitValues(&ins.Names, &ins.Descriptions, &ins.Categories, &ins.ExpectedValues, &ins.Currencies, &ins.Units,
				&ins.Frequencies, &ins.Starts, &ins.Ends, &ins.Statuses, &ins.OwnerIds, &ins.ExternalKeys, next)
			results[i].Status = bulk.Created
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
		if err := db.Q.BulkBenefitsInsert(ctx, t, ins); err != nil {
			if db.IsUniqueViolation(err, "benefits_initiative_name") { // only if PostgreSQL's lower() pairs two names Go's does not
				return nil, AlreadyExists("two benefits of this import have the same name in one initiative")
			}
			if db.IsUniqueViolation(err, "benefits_tenant_external_key") { // a key moved from a benefit the import updates to one it creates
				return nil, AlreadyExists("an external_key of this import moves between benefits; import the change in two steps")
			}
			return nil, err
		}
	}
	if len(upd.Ids) > 0 {
		upd.TenantID = a.TenantID
		if err := db.Q.BulkBenefitsUpdate(ctx, t, upd); err != nil {
			if db.IsUniqueViolation(err, "benefits_tenant_external_key") { // two benefits swap their keys
				return nil, AlreadyExists("an external_key of this import moves between benefits; import the change in two steps")
			}
			return nil, err
		}
	}
	if len(plan.Replaced) > 0 || len(plan.BenefitIds) > 0 {
		if err := db.Q.BulkBenefitPlansReplace(ctx, t, plan); err != nil {
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
	*frequencies, *starts, *ends = append(*frequencies, b.MeasurementFrequency), append(*starts, b.ExpectedStartDate), append(*ends, bulk.DateText(b.ExpectedEndDate))
	*statuses, *owners, *externalKeys = append(*statuses, b.Status), append(*owners, b.OwnerID), append(*externalKeys, deref(b.ExternalKey))
}

// exportBenefits reads a page of the tenant's benefits in (initiative, id) order, each with its plan.
func exportBenefits(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkBenefitsExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterInitiative, p.AfterID = cur.after[0].(uuid.UUID), cur.after[1].(uuid.UUID)
	}
	rows, err := db.Q.BulkBenefitsExport(cur.ctx, cur.tx, p)
	if err != nil {
		return bulkExportPage{err: err}
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.Benefit.ID
	}
	entries, err := db.Q.BenefitPlanList(cur.ctx, cur.tx, dbsqlc.BenefitPlanListParams{TenantID: cur.tenant, BenefitIds: ids})
	plans := map[uuid.UUID][]dbsqlc.BenefitPlanEntry{}
	for _, e := range entries {
		plans[e.BenefitID] = append(plans[e.BenefitID], e)
	}
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		j := toBenefitJSON(r.Benefit, plans[r.Benefit.ID]) // the single route's representation of the plan
		var plan any
		if j.Plan != nil {
			raw, err := json.Marshal(j.Plan)
			if err != nil {
				return bulkExportPage{err: err}
			}
			plan = json.RawMessage(raw)
		}
		out.records[i] = map[string]any{"id": j.ID, "initiative_id": j.InitiativeID, "name": j.Name, "description": j.Description,
			"category": j.Category, "expected_value": j.ExpectedValue, "currency": j.Currency, "unit": j.Unit,
			"measurement_frequency": j.MeasurementFrequency, "expected_start_date": j.ExpectedStartDate, "expected_end_date": j.ExpectedEndDate,
			"status": j.Status, "owner_id": j.OwnerID, "plan": plan, "external_key": j.ExternalKey}
		out.after = []any{r.Benefit.InitiativeID, r.Benefit.ID}
	}
	return out
}
