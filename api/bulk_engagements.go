package api

// Bulk import and export of engagements: a row is the body of POST
// /v1/stakeholders/{id}/engagement plus stakeholder_id, read by the same
// readEngagementBody and checked by the same internal/stakeholder rules
// (archived initiative read-only, 1,000 engagements per stakeholder, no
// future dates). Engagements are a log with no edit route, so the key is id
// only: in upsert mode a row with the id of an engagement of its stakeholder
// is unchanged if it says the same and an error (conflict) if it does not;
// an unknown id is not found; a row without id is logged. Create mode
// ignores id as the single route does. As logging one by one would, each
// stakeholder's summary (engagement_count, last_engagement_at, sentiment,
// at_risk_from) is refreshed in the same transaction, and one
// stakeholder.engagement event per logged engagement carries the engagement
// and its stakeholder after the import.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/bulk"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/stakeholder"
)

// engagementExportColumns are the fields of an exported engagement (id is the upsert key).
var engagementExportColumns = []string{"id", "stakeholder_id", "type", "date", "sentiment", "notes"}

// engagementRow is one import row on its way through the checks.
type engagementRow struct {
	stakeholderID uuid.UUID
	id            *uuid.UUID // upsert's key, if the row has one
	in            stakeholder.EngagementInput
	notes         string
}

func importEngagements(ctx context.Context, t pgx.Tx, a bulk.Actor, o bulk.Options, records []bulk.Record, offset int) ([]bulk.Result, error) {
	results, rows := bulk.NewResults(len(records), offset), make([]engagementRow, len(records))
	noStakeholder := []bulk.FieldError{{Field: "stakeholder_id", Code: "not_found", Message: "no such stakeholder"}}
	noEngagement := []bulk.FieldError{{Field: "id", Code: "not_found", Message: "no such engagement of this stakeholder"}}
	// 1. Each row read as the single route reads its body (stakeholder_id is its path).
	var stakeholderIDs, engagementIDs []uuid.UUID
	seen, firstOf := map[uuid.UUID]bool{}, map[uuid.UUID]int{}
	for i, rec := range records {
		b := input.New(rec)
		sid := b.Text("stakeholder_id", true, maxShortTextLen)
		rows[i].in, rows[i].notes = readEngagementBody(b)
		_ = b.Done()
		if len(b.Errors()) > 0 {
			results[i].Fail(bulk.RowErrors(b.Errors(), nil))
			continue
		}
		id, err := uuid.Parse(*sid)
		if err != nil {
			results[i].Fail(noStakeholder)
			continue
		}
		rows[i].stakeholderID = id
		if o.Mode == bulk.Upsert {
			eid, ok := bulk.RowID(rec)
			if !ok {
				results[i].Fail(noEngagement)
				continue
			}
			if eid != nil {
				if j, dup := firstOf[*eid]; dup {
					results[i].Fail([]bulk.FieldError{{Field: "id", Code: "duplicate", Message: fmt.Sprintf("row %d already has this id", offset+j)}})
					continue
				}
				firstOf[*eid], rows[i].id = i, eid
				engagementIDs = append(engagementIDs, *eid)
			}
		}
		if !seen[id] {
			seen[id] = true
			stakeholderIDs = append(stakeholderIDs, id)
		}
	}
	// 2. The stakeholders, locked as the single route locks one, and the engagements upsert names.
	stakeholders := map[uuid.UUID]dbsqlc.BulkEngagementStakeholdersLockedRow{}
	if len(stakeholderIDs) > 0 {
		list, err := db.Q.BulkEngagementStakeholdersLocked(ctx, t, dbsqlc.BulkEngagementStakeholdersLockedParams{TenantID: a.TenantID, Ids: stakeholderIDs})
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			stakeholders[s.Stakeholder.ID] = s
		}
	}
	existing := map[uuid.UUID]dbsqlc.StakeholderEngagement{}
	if len(engagementIDs) > 0 {
		list, err := db.Q.BulkEngagementsExisting(ctx, t, dbsqlc.BulkEngagementsExistingParams{TenantID: a.TenantID, Ids: engagementIDs})
		if err != nil {
			return nil, err
		}
		for _, e := range list {
			existing[e.ID] = e
		}
	}
	// 3. The single route's checks, in its order; the limit counts the rows logged before.
	now := time.Now()
	var ins dbsqlc.BulkEngagementsInsertParams
	added := map[uuid.UUID]int{}
	for i := range rows {
		if results[i].Status == bulk.Failed {
			continue
		}
		r := rows[i]
		s, ok := stakeholders[r.stakeholderID]
		if !ok {
			results[i].Fail(noStakeholder)
			continue
		}
		if err := stakeholder.CheckWritable(initiative.Status(s.InitiativeStatus)); err != nil {
			results[i].Fail([]bulk.FieldError{{Field: "stakeholder_id", Code: "conflict", Message: err.Error()}})
			continue
		}
		if err := stakeholder.CheckEngagement(r.in, now); err != nil {
			results[i].Fail(bulk.RowErrors(nil, err))
			continue
		}
		if r.id != nil {
			e, ok := existing[*r.id]
			if !ok || e.StakeholderID != r.stakeholderID {
				results[i].Fail(noEngagement)
				continue
			}
			if e.Type != string(r.in.Type) || !e.Date.Equal(r.in.Date) || e.Sentiment != string(r.in.Sentiment) || e.Notes != r.notes {
				results[i].Fail([]bulk.FieldError{{Field: "id", Code: "conflict",
					Message: "an engagement is a log entry and is never changed; import it without id to log a new one"}})
				continue
			}
			results[i].Status, results[i].ID = bulk.Unchanged, new(e.ID)
			continue
		}
		if err := stakeholder.CheckCanEngage(int(s.Stakeholder.EngagementCount) + added[r.stakeholderID]); err != nil {
			results[i].Fail([]bulk.FieldError{{Field: "stakeholder_id", Code: "conflict", Message: err.Error()}})
			continue
		}
		added[r.stakeholderID]++
		id := uuid.New()
		ins.Ids, ins.StakeholderIds = append(ins.Ids, id), append(ins.StakeholderIds, r.stakeholderID)
		ins.Types, ins.Dates = append(ins.Types, string(r.in.Type)), append(ins.Dates, r.in.Date)
		ins.Sentiments, ins.Notes = append(ins.Sentiments, string(r.in.Sentiment)), append(ins.Notes, r.notes)
		results[i].Status = bulk.Created
		if !o.DryRun {
			results[i].ID = new(id)
		}
	}
	if len(ins.Ids) == 0 {
		return results, nil
	}
	// 4. The writes: the engagements, each stakeholder's summary and at_risk_from, the events.
	ins.TenantID, ins.RecordedBy = a.TenantID, a.Subject
	logged, err := db.Q.BulkEngagementsInsert(ctx, t, ins)
	if err != nil {
		return nil, err
	}
	touched := slices.Collect(maps.Keys(added))
	refreshed, err := db.Q.StakeholdersRefreshEngagementSummary(ctx, t, dbsqlc.StakeholdersRefreshEngagementSummaryParams{TenantID: a.TenantID, Ids: touched})
	if err != nil {
		return nil, err
	}
	risk := dbsqlc.BulkStakeholdersSetAtRiskFromParams{TenantID: a.TenantID}
	for _, row := range refreshed {
		risk.Ids = append(risk.Ids, row.ID)
		risk.AtRiskFroms = append(risk.AtRiskFroms, bulk.DateText(engagedAtRiskFrom(row)))
	}
	final, err := db.Q.BulkStakeholdersSetAtRiskFrom(ctx, t, risk)
	if err != nil {
		return nil, err
	}
	after := map[uuid.UUID]stakeholderJSON{}
	for _, row := range final {
		after[row.ID] = toStakeholderJSON(row, now)
	}
	byID := map[uuid.UUID]dbsqlc.StakeholderEngagement{}
	for _, e := range logged {
		byID[e.ID] = e
	}
	events := make([][]byte, len(ins.Ids))
	for k, id := range ins.Ids { // in row order
		e := byID[id]
		if events[k], err = json.Marshal(engagementLoggedJSON{engagementJSON: toEngagementJSON(e), Stakeholder: after[e.StakeholderID]}); err != nil {
			return nil, err
		}
	}
	return results, outbox.WriteMany(ctx, t, a.TenantID, outbox.StakeholderEngagement, events)
}

// exportEngagements reads a page of the tenant's engagements in (stakeholder, id) order.
func exportEngagements(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkEngagementsExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterStakeholder, p.AfterID = cur.after[0].(uuid.UUID), cur.after[1].(uuid.UUID)
	}
	rows, err := db.Q.BulkEngagementsExport(cur.ctx, cur.tx, p)
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		j := toEngagementJSON(r)
		out.records[i] = map[string]any{"id": j.ID, "stakeholder_id": j.StakeholderID, "type": j.Type, "date": j.Date,
			"sentiment": j.Sentiment, "notes": j.Notes}
		out.after = []any{r.StakeholderID, r.ID}
	}
	return out
}
