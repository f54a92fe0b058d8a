package bulk

// Importing engagements: a row is the body of POST
// /v1/stakeholders/{id}/engagement plus stakeholder_id, read by the same
// stakeholder.ReadEngagement and logged by the same operation
// (stakeholder.LogEngagements: archived initiative read-only, the
// engagements limit, no future dates, the summaries refreshed, one
// stakeholder.engagement event per engagement). Engagements are a log with
// no edit route, so the key is id only: in upsert mode a row with the id of
// an engagement of its stakeholder is unchanged if it says the same and an
// error (conflict) if it does not; an unknown id is not found; a row
// without id is logged. Create mode ignores id as the single route does.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/stakeholder"
)

var (
	noStakeholder = []FieldError{{Field: "stakeholder_id", Code: "not_found", Message: "no such stakeholder"}}
	noEngagement  = []FieldError{{Field: "id", Code: "not_found", Message: "no such engagement of this stakeholder"}}
)

// ImportEngagements imports a page of engagements.
func ImportEngagements(ctx context.Context, tx pgx.Tx, a Actor, o Options, records []Record, offset int) ([]Result, error) {
	results := NewResults(len(records), offset)
	// 1. Each row read as the single route reads its body (stakeholder_id is its path).
	var entries []stakeholder.EngagementEntry
	var rows []int
	firstOf := map[uuid.UUID]int{}
	for i, rec := range records {
		b := input.New(rec)
		sid := b.Text("stakeholder_id", true, stakeholder.MaxShortTextLen)
		e := stakeholder.ReadEngagement(b)
		_ = b.Done()
		if len(b.Errors()) > 0 {
			results[i].Fail(RowErrors(b.Errors(), nil))
			continue
		}
		id, err := uuid.Parse(*sid)
		if err != nil {
			results[i].Fail(noStakeholder)
			continue
		}
		entry := stakeholder.EngagementEntry{StakeholderID: id, Engagement: e}
		if o.Mode == Upsert {
			eid, ok := RowID(rec)
			if !ok {
				results[i].Fail(noEngagement)
				continue
			}
			if eid != nil {
				if j, dup := firstOf[*eid]; dup {
					results[i].Fail([]FieldError{{Field: "id", Code: "duplicate", Message: fmt.Sprintf("row %d already has this id", offset+j)}})
					continue
				}
				firstOf[*eid], entry.Logged = i, eid
			}
		}
		entries, rows = append(entries, entry), append(rows, i)
	}
	// 2. Logged by the single route's operation, the limit counting the rows logged before.
	out, err := stakeholder.LogEngagements(ctx, tx, stakeholder.Actor{TenantID: a.TenantID, Subject: a.Subject}, time.Now(), entries)
	if err != nil {
		return nil, err
	}
	for k, i := range rows {
		switch r := out[k]; {
		case r.Err != nil:
			results[i].Fail(engagementRowErrors(r.Err))
		case r.Unchanged:
			results[i].Status, results[i].ID = Unchanged, new(r.ID)
		default:
			results[i].Status = Created
			if !o.DryRun {
				results[i].ID = new(r.ID)
			}
		}
	}
	return results, nil
}

// engagementRowErrors are the row errors of LogEngagements' refusal of one entry.
func engagementRowErrors(err error) []FieldError {
	switch {
	case errors.Is(err, stakeholder.ErrStakeholderNotFound):
		return noStakeholder
	case errors.Is(err, stakeholder.ErrEngagementNotFound):
		return noEngagement
	case errors.Is(err, stakeholder.ErrEngagementChanged):
		return []FieldError{{Field: "id", Code: "conflict", Message: err.Error()}}
	case errors.Is(err, stakeholder.ErrInitiativeArchived), errors.Is(err, stakeholder.ErrEngagementLimit):
		return []FieldError{{Field: "stakeholder_id", Code: "conflict", Message: err.Error()}}
	}
	return RowErrors(nil, err)
}
