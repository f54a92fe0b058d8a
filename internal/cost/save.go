package cost

import (
	"context"
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

// Change is one cost write: a new cost of InitiativeID (ID nil), or a
// replacement (Replace: PUT and an import row) or a patch of cost ID, which
// must be a cost of InitiativeID. Fields are read by ReadFields.
type Change struct {
	InitiativeID uuid.UUID
	ID           *uuid.UUID
	Fields       Fields
	Replace      bool
	Check        Precondition // of the stored cost (If-Match); nil checks nothing
}

// Result is what a change did.
type Result int

const (
	Created Result = iota
	Updated
	Unchanged // the stored cost already was what the change makes it (Touch unset)
)

// SaveOptions are the choices of one batch.
type SaveOptions struct {
	// Touch writes a change that leaves a cost as it was (a route's PUT
	// always moves updated_at); without it such a change is Unchanged.
	Touch bool
}

// Outcome is what saving one change did: the cost as stored after it, or why it failed.
type Outcome struct {
	Result Result
	Cost   dbsqlc.InitiativeCost
	Err    error
}

// DuplicateError: an earlier change of the batch (First, its index) names the same cost.
type DuplicateError struct{ First int }

func (e *DuplicateError) Error() string { return "an earlier change of the batch names this cost" }

// SaveCosts is the one way costs are created and replaced: the routes (a
// batch of one) and a costs import (a page) call it. Every change gets the
// same checks in the same order: the initiative exists, is the one the body
// names and is not archived (locked for update in id order, so the limit
// counts under the lock); the cost exists in it (locked), its precondition;
// the definition; at most MaxPerInitiative costs. The writes are one
// multi-row statement for the new costs and one for the replaced ones.
// outcomes[i] is changes[i]'s.
func SaveCosts(ctx context.Context, tx pgx.Tx, actor Actor, changes []Change, opts SaveOptions) ([]Outcome, error) {
	outcomes := make([]Outcome, len(changes))
	var initiativeIDs, costIDs []uuid.UUID
	seen := map[uuid.UUID]bool{}
	firstOf := map[uuid.UUID]int{}
	for i, ch := range changes {
		if !seen[ch.InitiativeID] {
			seen[ch.InitiativeID] = true
			initiativeIDs = append(initiativeIDs, ch.InitiativeID)
		}
		if ch.ID != nil {
			if _, dup := firstOf[*ch.ID]; !dup {
				firstOf[*ch.ID] = i
				costIDs = append(costIDs, *ch.ID)
			}
		}
	}
	initiatives := map[uuid.UUID]dbsqlc.BulkInitiativesLockedRow{}
	var stamp time.Time // the transaction's time: what now() stamps the written rows with
	if len(initiativeIDs) > 0 {
		list, err := db.Q.BulkInitiativesLocked(ctx, tx, dbsqlc.BulkInitiativesLockedParams{TenantID: actor.TenantID, Ids: initiativeIDs})
		if err != nil {
			return nil, err
		}
		for _, l := range list {
			initiatives[l.ID], stamp = l, l.StampedAt
		}
	}
	stored := map[uuid.UUID]dbsqlc.InitiativeCost{}
	if len(costIDs) > 0 {
		list, err := db.Q.BulkCostsExisting(ctx, tx, dbsqlc.BulkCostsExistingParams{TenantID: actor.TenantID, Ids: costIDs})
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			stored[c.ID] = c
		}
	}
	counts := map[uuid.UUID]int{}
	if len(initiatives) > 0 {
		ids := make([]uuid.UUID, 0, len(initiatives))
		for id := range initiatives {
			ids = append(ids, id)
		}
		list, err := db.Q.BulkCostCounts(ctx, tx, dbsqlc.BulkCostCountsParams{TenantID: actor.TenantID, InitiativeIds: ids})
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			counts[c.InitiativeID] = int(c.N)
		}
	}
	var ins, upd columns
	var insInitiatives []uuid.UUID
	for i, ch := range changes {
		cost, err := check(ch, i, initiatives, stored, firstOf)
		if err != nil {
			outcomes[i].Err = err
			continue
		}
		name, def := ch.Fields.Definition(cost, ch.Replace)
		checked, err := CheckDefinition(def)
		if err != nil {
			outcomes[i].Err = err
			continue
		}
		next := cost
		next.Name, next.Category, next.Amount, next.Currency = name, string(def.Category), money.FromInput(def.Amount), def.Currency
		next.Period, next.Recurrence, next.EndPeriod, next.UpdatedAt = checked.Period.FirstDay(), string(def.Recurrence), finance.FirstDayOf(checked.End), stamp
		if ch.ID != nil {
			if !opts.Touch && same(cost, next) {
				outcomes[i] = Outcome{Result: Unchanged, Cost: cost}
				continue
			}
			upd.add(next)
			outcomes[i] = Outcome{Result: Updated, Cost: next}
			continue
		}
		if err := CheckCanAdd(counts[ch.InitiativeID]); err != nil {
			outcomes[i].Err = err
			continue
		}
		counts[ch.InitiativeID]++
		next.TenantID, next.ID, next.InitiativeID, next.CreatedAt = actor.TenantID, uuid.New(), ch.InitiativeID, stamp
		ins.add(next)
		insInitiatives = append(insInitiatives, ch.InitiativeID)
		outcomes[i] = Outcome{Result: Created, Cost: next}
	}
	if len(ins.ids) > 0 {
		if err := db.Q.BulkCostsInsert(ctx, tx, dbsqlc.BulkCostsInsertParams{TenantID: actor.TenantID, Ids: ins.ids, InitiativeIds: insInitiatives,
			Names: ins.names, Categories: ins.categories, Amounts: ins.amounts, Currencies: ins.currencies, Periods: ins.periods,
			Recurrences: ins.recurrences, EndPeriods: ins.endTexts}); err != nil {
			return nil, err
		}
	}
	if len(upd.ids) > 0 {
		if err := db.Q.BulkCostsUpdate(ctx, tx, dbsqlc.BulkCostsUpdateParams{TenantID: actor.TenantID, Ids: upd.ids,
			Names: upd.names, Categories: upd.categories, Amounts: upd.amounts, Currencies: upd.currencies, Periods: upd.periods,
			Recurrences: upd.recurrences, EndPeriods: upd.endTexts}); err != nil {
			return nil, err
		}
	}
	return outcomes, nil
}

// check applies the rules of a change before its definition: its
// initiative, and the stored cost it changes (zero for a new one).
func check(ch Change, i int, initiatives map[uuid.UUID]dbsqlc.BulkInitiativesLockedRow, stored map[uuid.UUID]dbsqlc.InitiativeCost,
	firstOf map[uuid.UUID]int) (dbsqlc.InitiativeCost, error) {
	in, ok := initiatives[ch.InitiativeID]
	if !ok {
		return dbsqlc.InitiativeCost{}, ErrInitiativeNotFound
	}
	if ch.Fields.InitiativeID != nil && *ch.Fields.InitiativeID != in.ID.String() {
		return dbsqlc.InitiativeCost{}, validation.New("initiative_id", validation.CodeInvalidValue, "a cost belongs to the initiative of its path and cannot move")
	}
	if err := CheckWritable(initiative.Status(in.Status)); err != nil {
		return dbsqlc.InitiativeCost{}, err
	}
	if ch.ID == nil {
		return dbsqlc.InitiativeCost{}, nil
	}
	if j := firstOf[*ch.ID]; j != i {
		return dbsqlc.InitiativeCost{}, &DuplicateError{First: j}
	}
	cost, ok := stored[*ch.ID]
	if !ok || cost.InitiativeID != ch.InitiativeID { // a cost never moves between initiatives
		return cost, ErrNotFound
	}
	if ch.Check != nil {
		return cost, ch.Check(cost.UpdatedAt)
	}
	return cost, nil
}

// same reports whether a change leaves the stored cost's columns as they are.
func same(a, b dbsqlc.InitiativeCost) bool {
	sameEnd := (a.EndPeriod == nil) == (b.EndPeriod == nil) && (a.EndPeriod == nil || a.EndPeriod.Equal(*b.EndPeriod))
	return a.Name == b.Name && a.Category == b.Category && a.Currency == b.Currency && a.Recurrence == b.Recurrence &&
		a.Amount.Equal(b.Amount) && a.Period.Equal(b.Period) && sameEnd
}

// columns are the array parameters of BulkCostsInsert and BulkCostsUpdate.
type columns struct {
	ids                                                  []uuid.UUID
	names, categories, currencies, recurrences, endTexts []string
	amounts                                              []decimal.Decimal
	periods                                              []time.Time
}

func (c *columns) add(v dbsqlc.InitiativeCost) {
	c.ids, c.names, c.categories, c.currencies = append(c.ids, v.ID), append(c.names, v.Name), append(c.categories, v.Category), append(c.currencies, v.Currency)
	c.recurrences, c.amounts, c.periods = append(c.recurrences, v.Recurrence), append(c.amounts, v.Amount), append(c.periods, v.Period)
	end := ""
	if v.EndPeriod != nil {
		end = v.EndPeriod.Format(time.DateOnly)
	}
	c.endTexts = append(c.endTexts, end)
}
