package bulk

// Importing costs: a row is the body of POST /v1/initiatives/{id}/costs plus
// initiative_id, read by the same cost.ReadFields and saved by the same
// cost.SaveCosts as the single create and PUT (archived initiative
// read-only, 500 costs per initiative). Costs have no natural key (two equal lines are
// two charges), so the key is id: in upsert mode a row with the id of a cost
// of its initiative replaces it as PUT does, an unknown id is not found, a
// row without id is created; create mode ignores id as the single create
// does. No cost route emits an event, so neither does the import.

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/internal/cost"
	"github.com/valuecase/valuecase/internal/input"
)

// ImportCosts writes a page of costs rows through cost.SaveCosts, the path of
// the single create and PUT.
func ImportCosts(ctx context.Context, tx pgx.Tx, a Actor, o Options, records []Record, offset int) ([]Result, error) {
	results, fields, initiativeIDs, _, err := InitiativeRows(ctx, tx, a.TenantID, records, offset,
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
	var changes []cost.Change
	var rows []int // changes[k] is records[rows[k]]'s
	for i, rec := range records {
		if results[i].Status == Failed {
			continue
		}
		change := cost.Change{InitiativeID: initiativeIDs[i], Fields: fields[i], Replace: true}
		change.Fields.InitiativeID = nil // the row's initiative_id names the initiative itself: nothing to compare
		if o.Mode == Upsert {            // create ignores ids, as the single create does
			id, ok := RowID(rec)
			if !ok {
				results[i].Fail(notFound)
				continue
			}
			change.ID = id
		}
		changes, rows = append(changes, change), append(rows, i)
	}
	if len(changes) == 0 {
		return results, nil
	}
	outcomes, err := cost.SaveCosts(ctx, tx, cost.Actor{TenantID: a.TenantID}, changes, cost.SaveOptions{})
	if err != nil {
		return nil, err
	}
	for k, out := range outcomes {
		r := &results[rows[k]]
		dup, isDup := errors.AsType[*cost.DuplicateError](out.Err)
		switch {
		case isDup:
			r.Fail([]FieldError{{Field: "id", Code: "duplicate", Message: fmt.Sprintf("row %d already has this id", offset+rows[dup.First])}})
		case errors.Is(out.Err, cost.ErrNotFound):
			r.Fail(notFound)
		case errors.Is(out.Err, cost.ErrInitiativeNotFound):
			r.Fail([]FieldError{{Field: "initiative_id", Code: "not_found", Message: "no such initiative"}})
		case errors.Is(out.Err, cost.ErrLimitReached), errors.Is(out.Err, cost.ErrInitiativeArchived):
			r.Fail([]FieldError{{Field: "initiative_id", Code: "conflict", Message: out.Err.Error()}})
		case out.Err != nil:
			r.Fail(RowErrors(nil, out.Err))
		case out.Result == cost.Created:
			r.Status = Created
			if !o.DryRun {
				r.ID = new(out.Cost.ID)
			}
		case out.Result == cost.Updated:
			r.Status, r.ID = Updated, new(out.Cost.ID)
		default:
			r.Status, r.ID = Unchanged, new(out.Cost.ID)
		}
	}
	return results, nil
}
