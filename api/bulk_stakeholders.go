package api

// Bulk import and export of stakeholders: a row is the body of POST
// /v1/stakeholders, read by the same readStakeholder and checked by the same
// stakeholderFields.check; its key is initiative_id + e-mail (compared
// case-insensitively, as the unique index does). An existing stakeholder is
// replaced as PUT /v1/stakeholders/{id} replaces it. Neither single route
// emits an event, so neither does the import.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/bulk"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/stakeholder"
)

// stakeholderExportColumns are the fields of an exported stakeholder (id is read-only on import).
var stakeholderExportColumns = []string{"id", "initiative_id", "name", "email", "role", "department", "influence", "interest", "notes"}

type stakeholderKey struct {
	initiative uuid.UUID
	email      string // lower case
}

// stakeholderRow is one import row on its way through the checks.
type stakeholderRow struct {
	initiativeID uuid.UUID
	f            stakeholderFields
	key          stakeholderKey
}

func importStakeholders(ctx context.Context, t pgx.Tx, a bulk.Actor, o bulk.Options, records []bulk.Record, offset int) ([]bulk.Result, error) {
	results, fields, initiativeIDs, initiatives, err := bulk.InitiativeRows(ctx, t, a.TenantID, records, offset,
		func(b *input.Object) stakeholderFields { return readStakeholder(b, true, true) }, func(f stakeholderFields) *string { return f.initiativeID }, stakeholder.CheckWritable)
	if err != nil {
		return nil, err
	}
	rows := make([]stakeholderRow, len(records))
	for i := range rows {
		rows[i].f, rows[i].initiativeID = fields[i], initiativeIDs[i]
	}
	// Every locked row carries the transaction's time: the single create's "now".
	var stamp time.Time
	for _, in := range initiatives {
		stamp = in.StampedAt
	}
	firstOf := map[stakeholderKey]int{}
	var keyInitiatives []uuid.UUID
	var keyEmails []string
	var keyRows []int
	for i := range rows {
		if results[i].Status == bulk.Failed {
			continue
		}
		_, _, checked, err := rows[i].f.check(dbsqlc.Stakeholder{}, true)
		if err != nil {
			results[i].Fail(bulk.RowErrors(nil, err))
			continue
		}
		rows[i].key = stakeholderKey{rows[i].initiativeID, checked.EmailKey}
		if j, dup := firstOf[rows[i].key]; dup {
			results[i].Fail([]bulk.FieldError{{Field: "email", Code: "duplicate",
				Message: fmt.Sprintf("row %d already has this e-mail in this initiative (addresses compare case-insensitively)", offset+j)}})
			continue
		}
		firstOf[rows[i].key] = i
		keyInitiatives, keyEmails, keyRows = append(keyInitiatives, rows[i].initiativeID), append(keyEmails, *rows[i].f.email), append(keyRows, i)
	}
	// 3. What is stored at those keys decides created, updated or unchanged.
	existing := map[int]dbsqlc.Stakeholder{} // by row
	if len(keyInitiatives) > 0 {
		list, err := db.Q.BulkStakeholdersExisting(ctx, t, dbsqlc.BulkStakeholdersExistingParams{TenantID: a.TenantID, InitiativeIds: keyInitiatives, Emails: keyEmails})
		if err != nil {
			return nil, err
		}
		for _, e := range list {
			existing[keyRows[e.KeyN-1]] = e.Stakeholder
		}
	}
	var ins dbsqlc.BulkStakeholdersInsertParams
	var upd dbsqlc.BulkStakeholdersUpdateParams
	added := map[uuid.UUID]int{} // stakeholders this import creates, per initiative
	for i := range rows {
		if results[i].Status == bulk.Failed {
			continue
		}
		r := rows[i]
		e, stored := existing[i]
		if stored && o.Mode == bulk.Create {
			results[i].Fail([]bulk.FieldError{{Field: "email", Code: "already_exists",
				Message: "a stakeholder with this e-mail already exists in this initiative; import with mode upsert to replace it"}})
			continue
		}
		next, fields, checked, err := r.f.check(e, true) // PUT's replace over the stored record (or create's over none)
		if err != nil {
			results[i].Fail(bulk.RowErrors(nil, err))
			continue
		}
		values := []string{next.Name, next.Email, deref(checked.Role), deref(checked.Department), next.Influence, next.Interest, next.Notes}
		if stored {
			if slices.Equal(values, []string{e.Name, e.Email, deref(e.Role), deref(e.Department), e.Influence, e.Interest, e.Notes}) {
				results[i].Status, results[i].ID = bulk.Unchanged, new(e.ID)
				continue
			}
			upd.Ids = append(upd.Ids, e.ID)
			upd.AtRiskFroms = append(upd.AtRiskFroms, bulk.DateText(stakeholder.AtRiskFrom(fields.Influence, stakeholder.StoredEngagements(e).Engagements(), e.CreatedAt)))
			appendStakeholderValues(&upd.Names, &upd.Emails, &upd.Roles, &upd.Departments, &upd.Influences, &upd.Interests, &upd.Notes, values)
			results[i].Status, results[i].ID = bulk.Updated, new(e.ID)
			continue
		}
		in := initiatives[r.initiativeID]
		if err := stakeholder.CheckCanAdd(int(in.Stakeholders) + added[r.initiativeID]); err != nil {
			results[i].Fail([]bulk.FieldError{{Field: "initiative_id", Code: "conflict", Message: err.Error()}})
			continue
		}
		added[r.initiativeID]++
		id := uuid.New()
		ins.Ids, ins.InitiativeIds = append(ins.Ids, id), append(ins.InitiativeIds, r.initiativeID)
		ins.AtRiskFroms = append(ins.AtRiskFroms, bulk.DateText(stakeholder.AtRiskFrom(fields.Influence, nil, stamp)))
		appendStakeholderValues(&ins.Names, &ins.Emails, &ins.Roles, &ins.Departments, &ins.Influences, &ins.Interests, &ins.Notes, values)
		results[i].Status = bulk.Created
		if !o.DryRun {
			results[i].ID = new(id)
		}
	}
	// 4. The writes: one statement each for the new stakeholders and the replaced ones.
	if len(ins.Ids) > 0 {
		ins.TenantID = a.TenantID
		if err := db.Q.BulkStakeholdersInsert(ctx, t, ins); err != nil {
			// Only if PostgreSQL's lower() pairs two addresses Go's does not: the single route's 409.
			return nil, duplicateEmail(err, "of this import")
		}
	}
	if len(upd.Ids) > 0 {
		upd.TenantID = a.TenantID
		if err := db.Q.BulkStakeholdersUpdate(ctx, t, upd); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// appendStakeholderValues appends name, email, role, department, influence, interest and notes to their columns.
func appendStakeholderValues(names, emails, roles, departments, influences, interests, notes *[]string, v []string) {
	for i, col := range []*[]string{names, emails, roles, departments, influences, interests, notes} {
		*col = append(*col, v[i])
	}
}

// exportStakeholders reads a page of the tenant's stakeholders in (initiative, id) order.
func exportStakeholders(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkStakeholdersExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterInitiative, p.AfterID = cur.after[0].(uuid.UUID), cur.after[1].(uuid.UUID)
	}
	rows, err := db.Q.BulkStakeholdersExport(cur.ctx, cur.tx, p)
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		out.records[i] = map[string]any{"id": r.ID.String(), "initiative_id": r.InitiativeID.String(), "name": r.Name, "email": r.Email,
			"role": r.Role, "department": r.Department, "influence": r.Influence, "interest": r.Interest, "notes": r.Notes}
		out.after = []any{r.InitiativeID, r.ID}
	}
	return out
}
