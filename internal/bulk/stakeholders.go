package bulk

// Importing stakeholders: a row is the body of POST /v1/stakeholders, read
// by the same stakeholder.ReadBody; its key is initiative_id + e-mail
// (compared case-insensitively, as the unique index does). A new key is
// created and an existing stakeholder replaced as PUT replaces it, by the
// operations the single routes call (stakeholder.Create and Replace).
// Neither single route emits an event, so neither does the import.

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/stakeholder"
)

type stakeholderKey struct {
	initiative uuid.UUID
	email      string // lower case
}

// ImportStakeholders imports a page of stakeholders.
func ImportStakeholders(ctx context.Context, tx pgx.Tx, a Actor, o Options, records []Record, offset int) ([]Result, error) {
	actor := stakeholder.Actor{TenantID: a.TenantID, Subject: a.Subject}
	results, bodies, initiativeIDs, initiatives, err := InitiativeRows(ctx, tx, a.TenantID, records, offset,
		func(b *input.Object) stakeholder.Body { return stakeholder.ReadBody(b, true, true) },
		func(f stakeholder.Body) *string { return f.InitiativeID }, stakeholder.CheckWritable)
	if err != nil {
		return nil, err
	}
	// 1. The key of each row: its checked e-mail in its initiative.
	firstOf := map[stakeholderKey]int{}
	var keyInitiatives []uuid.UUID
	var keyEmails []string
	var keyRows []int
	for i := range records {
		if results[i].Status == Failed {
			continue
		}
		_, checked, err := stakeholder.Merge(dbsqlc.Stakeholder{}, bodies[i], true)
		if err != nil {
			results[i].Fail(RowErrors(nil, err))
			continue
		}
		key := stakeholderKey{initiativeIDs[i], checked.EmailKey}
		if j, dup := firstOf[key]; dup {
			results[i].Fail([]FieldError{{Field: "email", Code: "duplicate",
				Message: fmt.Sprintf("row %d already has this e-mail in this initiative (addresses compare case-insensitively)", offset+j)}})
			continue
		}
		firstOf[key] = i
		keyInitiatives, keyEmails, keyRows = append(keyInitiatives, initiativeIDs[i]), append(keyEmails, *bodies[i].Email), append(keyRows, i)
	}
	if len(keyRows) == 0 {
		return results, nil
	}
	// 2. What is stored at those keys decides created, updated or unchanged.
	existing := map[int]dbsqlc.Stakeholder{} // by row
	list, err := db.Q.BulkStakeholdersExisting(ctx, tx, dbsqlc.BulkStakeholdersExistingParams{TenantID: a.TenantID, InitiativeIds: keyInitiatives, Emails: keyEmails})
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		existing[keyRows[e.KeyN-1]] = e.Stakeholder
	}
	var creates []stakeholder.New
	var replacements []stakeholder.Replacement
	var createRows, replaceRows []int
	for _, i := range keyRows {
		e, stored := existing[i]
		switch {
		case !stored:
			creates, createRows = append(creates, stakeholder.New{InitiativeID: initiativeIDs[i], Body: bodies[i]}), append(createRows, i)
		case o.Mode == Create:
			results[i].Fail([]FieldError{{Field: "email", Code: "already_exists",
				Message: "a stakeholder with this e-mail already exists in this initiative; import with mode upsert to replace it"}})
		default:
			next, _, err := stakeholder.Merge(e, bodies[i], true) // PUT's replace over the stored record
			if err != nil {
				results[i].Fail(RowErrors(nil, err))
				continue
			}
			if sameStakeholder(e, next) {
				results[i].Status, results[i].ID = Unchanged, new(e.ID)
				continue
			}
			status := initiative.Status(initiatives[initiativeIDs[i]].Status)
			replacements = append(replacements, stakeholder.Replacement{Current: e, InitiativeStatus: status, Body: bodies[i], Full: true})
			replaceRows = append(replaceRows, i)
		}
	}
	// 3. The writes, by the single routes' operations.
	created, err := stakeholder.Create(ctx, tx, actor, creates)
	if errors.Is(err, stakeholder.ErrEmailTaken) {
		// Only if PostgreSQL's lower() pairs two addresses Go's does not.
		return nil, &ConflictError{"two stakeholders of this import have the same e-mail address in one initiative (addresses compare case-insensitively)"}
	}
	if err != nil {
		return nil, err
	}
	for k, i := range createRows {
		if created[k].Err != nil {
			results[i].Fail(stakeholderRowErrors(created[k].Err))
			continue
		}
		results[i].Status = Created
		if !o.DryRun {
			results[i].ID = new(created[k].Stakeholder.ID)
		}
	}
	replaced, err := stakeholder.Replace(ctx, tx, actor, replacements)
	if errors.Is(err, stakeholder.ErrEmailTaken) {
		return nil, &ConflictError{"two stakeholders of this import have the same e-mail address in one initiative (addresses compare case-insensitively)"}
	}
	if err != nil {
		return nil, err
	}
	for k, i := range replaceRows {
		if replaced[k].Err != nil {
			results[i].Fail(stakeholderRowErrors(replaced[k].Err))
			continue
		}
		results[i].Status, results[i].ID = Updated, new(replaced[k].Stakeholder.ID)
	}
	return results, nil
}

// sameStakeholder reports whether next leaves every writable field of e as it is.
func sameStakeholder(e, next dbsqlc.Stakeholder) bool {
	text := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	return e.Name == next.Name && e.Email == next.Email && text(e.Role) == text(next.Role) && text(e.Department) == text(next.Department) &&
		e.Influence == next.Influence && e.Interest == next.Interest && e.Notes == next.Notes
}

// stakeholderRowErrors are the row errors of a stakeholder operation's refusal.
func stakeholderRowErrors(err error) []FieldError {
	switch {
	case errors.Is(err, stakeholder.ErrInitiativeNotFound):
		return []FieldError{{Field: "initiative_id", Code: "not_found", Message: err.Error()}}
	case errors.Is(err, stakeholder.ErrLimitReached), errors.Is(err, stakeholder.ErrInitiativeArchived):
		return []FieldError{{Field: "initiative_id", Code: "conflict", Message: err.Error()}}
	}
	return RowErrors(nil, err)
}
