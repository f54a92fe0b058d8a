package bulk

// Importing costs: a row is the body of POST /v1/initiatives/{id}/costs plus
// initiative_id, read by the same cost.ReadFields and checked by the same
// Fields.Definition and internal/cost rules (archived initiative read-only,
// 500 costs per initiative). Costs have no natural key (two equal lines are
// two charges), so the key is id: in upsert mode a row with the id of a cost
// of its initiative replaces it as PUT does, an unknown id is not found, a
// row without id is created; create mode ignores id as the single create
// does. No cost route emits an event, so neither does the import.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/cost"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
)

// costValues are the columns a cost write sets, in the order of the bulk statements.
type costValues struct {
	name, category, currency, recurrence string
	amount                               decimal.Decimal
	period                               time.Time
	end                                  *time.Time
}

func storedCostValues(c dbsqlc.InitiativeCost) costValues {
	return costValues{name: c.Name, category: c.Category, currency: c.Currency, recurrence: c.Recurrence, amount: c.Amount, period: c.Period, end: c.EndPeriod}
}

func (v costValues) equal(o costValues) bool {
	sameEnd := (v.end == nil) == (o.end == nil) && (v.end == nil || v.end.Equal(*o.end))
	return v.name == o.name && v.category == o.category && v.currency == o.currency && v.recurrence == o.recurrence &&
		v.amount.Equal(o.amount) && v.period.Equal(o.period) && sameEnd
}

// costColumns are the array parameters of BulkCostsInsert and BulkCostsUpdate.
type costColumns struct {
	ids                                                  []uuid.UUID
	names, categories, currencies, recurrences, endTexts []string
	amounts                                              []decimal.Decimal
	periods                                              []time.Time
}

func (c *costColumns) add(id uuid.UUID, v costValues) {
	c.ids, c.names, c.categories, c.currencies = append(c.ids, id), append(c.names, v.name), append(c.categories, v.category), append(c.currencies, v.currency)
	c.recurrences, c.amounts, c.periods = append(c.recurrences, v.recurrence), append(c.amounts, v.amount), append(c.periods, v.period)
	c.endTexts = append(c.endTexts, DateText(v.end))
}

// ImportCosts writes a page of costs rows.
func ImportCosts(ctx context.Context, tx pgx.Tx, a Actor, o Options, records []Record, offset int) ([]Result, error) {
	results, fields, initiativeIDs, initiatives, err := InitiativeRows(ctx, tx, a.TenantID, records, offset,
		func(b *input.Object) cost.Fields {
			f := cost.ReadFields(b, true)
			if !b.Has("initiative_id") || b.IsNull("initiative_id") { // the path's part of the single route
				b.Fail("initiative_id", "required", "is required")
			}
			return f
		}, func(f cost.Fields) *string { return f.InitiativeID }, cost.CheckWritable)
	if err != nil {
		return nil, err
	}
	notFound := []FieldError{{Field: "id", Code: "not_found", Message: "no such cost in this initiative"}}
	// 1. In upsert mode, the ids rows name (once each); create ignores them.
	ids := make([]*uuid.UUID, len(records))
	var lookup []uuid.UUID
	firstOf := map[uuid.UUID]int{}
	for i, rec := range records {
		if results[i].Status == Failed || o.Mode != Upsert {
			continue
		}
		id, ok := RowID(rec)
		if !ok {
			results[i].Fail(notFound)
			continue
		}
		if id == nil {
			continue
		}
		if j, dup := firstOf[*id]; dup {
			results[i].Fail([]FieldError{{Field: "id", Code: "duplicate", Message: fmt.Sprintf("row %d already has this id", offset+j)}})
			continue
		}
		firstOf[*id], ids[i] = i, id
		lookup = append(lookup, *id)
	}
	existing := map[uuid.UUID]dbsqlc.InitiativeCost{}
	if len(lookup) > 0 {
		list, err := db.Q.BulkCostsExisting(ctx, tx, dbsqlc.BulkCostsExistingParams{TenantID: a.TenantID, Ids: lookup})
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			existing[c.ID] = c
		}
	}
	counts := map[uuid.UUID]int{}
	if len(initiatives) > 0 {
		list, err := db.Q.BulkCostCounts(ctx, tx, dbsqlc.BulkCostCountsParams{TenantID: a.TenantID, InitiativeIds: slices.Collect(maps.Keys(initiatives))})
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			counts[c.InitiativeID] = int(c.N)
		}
	}
	// 2. Each row checked as the single create (or PUT, over the stored cost) checks it.
	var ins, upd costColumns
	var insInitiatives []uuid.UUID
	for i := range records {
		if results[i].Status == Failed {
			continue
		}
		var stored dbsqlc.InitiativeCost
		if ids[i] != nil {
			var ok bool
			if stored, ok = existing[*ids[i]]; !ok || stored.InitiativeID != initiativeIDs[i] { // a cost never moves
				results[i].Fail(notFound)
				continue
			}
		}
		name, def := fields[i].Definition(stored, true)
		checked, err := cost.CheckDefinition(def)
		if err != nil {
			results[i].Fail(RowErrors(nil, err))
			continue
		}
		v := costValues{name: name, category: string(def.Category), currency: def.Currency, recurrence: string(def.Recurrence),
			amount: money.FromInput(def.Amount), period: checked.Period.FirstDay(), end: firstDay(checked.End)}
		if ids[i] != nil {
			results[i].ID = new(stored.ID)
			if v.equal(storedCostValues(stored)) {
				results[i].Status = Unchanged
				continue
			}
			upd.add(stored.ID, v)
			results[i].Status = Updated
			continue
		}
		if err := cost.CheckCanAdd(counts[initiativeIDs[i]]); err != nil {
			results[i].Fail([]FieldError{{Field: "initiative_id", Code: "conflict", Message: err.Error()}})
			continue
		}
		counts[initiativeIDs[i]]++
		id := uuid.New()
		ins.add(id, v)
		insInitiatives = append(insInitiatives, initiativeIDs[i])
		results[i].Status = Created
		if !o.DryRun {
			results[i].ID = new(id)
		}
	}
	// 3. The writes: one statement each for the new costs and the replaced ones.
	if len(ins.ids) > 0 {
		if err := db.Q.BulkCostsInsert(ctx, tx, dbsqlc.BulkCostsInsertParams{TenantID: a.TenantID, Ids: ins.ids, InitiativeIds: insInitiatives,
			Names: ins.names, Categories: ins.categories, Amounts: ins.amounts, Currencies: ins.currencies, Periods: ins.periods,
			Recurrences: ins.recurrences, EndPeriods: ins.endTexts}); err != nil {
			return nil, err
		}
	}
	if len(upd.ids) > 0 {
		if err := db.Q.BulkCostsUpdate(ctx, tx, dbsqlc.BulkCostsUpdateParams{TenantID: a.TenantID, Ids: upd.ids,
			Names: upd.names, Categories: upd.categories, Amounts: upd.amounts, Currencies: upd.currencies, Periods: upd.periods,
			Recurrences: upd.recurrences, EndPeriods: upd.endTexts}); err != nil {
			return nil, err
		}
	}
	return results, nil
}
