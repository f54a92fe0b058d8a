package bulk

// Importing initiatives: a row is the body of POST /v1/initiatives, read by
// the same initiative.Read; its key is the name, compared case-insensitively
// as the unique index does. A new name is created and an existing initiative
// replaced as PUT replaces it, by the operations the single routes call
// (initiative.Create and Replace), with the same history and events.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/input"
)

// ImportInitiatives imports a page of initiatives.
func ImportInitiatives(ctx context.Context, tx pgx.Tx, a Actor, o Options, records []Record, offset int) ([]Result, error) {
	actor := initiative.Actor{TenantID: a.TenantID, Subject: a.Subject, Roles: a.Roles}
	results := NewResults(len(records), offset)
	rows := make([]initiative.Fields, len(records))
	// 1. Each row as the single create reads its body; the key is the lower-case name.
	firstOf := map[string]int{}
	var keyNames []string
	var keyRows []int
	for i, rec := range records {
		b := input.New(rec)
		rows[i] = initiative.Read(b, true)
		_ = b.Done()
		if len(b.Errors()) > 0 {
			results[i].Fail(RowErrors(b.Errors(), nil))
			continue
		}
		key := strings.ToLower(*rows[i].Name)
		if j, dup := firstOf[key]; dup {
			results[i].Fail([]FieldError{{Field: "name", Code: "duplicate",
				Message: fmt.Sprintf("row %d already has this name (names compare case-insensitively)", offset+j)}})
			continue
		}
		firstOf[key] = i
		keyNames, keyRows = append(keyNames, *rows[i].Name), append(keyRows, i)
	}
	if len(keyNames) == 0 {
		return results, nil
	}
	// 2. The stored initiatives at the keys, locked as PUT locks one.
	existing := map[int]dbsqlc.Initiative{} // by row
	list, err := db.Q.BulkInitiativesExisting(ctx, tx, dbsqlc.BulkInitiativesExistingParams{TenantID: a.TenantID, Names: keyNames})
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		existing[keyRows[e.KeyN-1]] = e.Initiative
	}
	// 3. New names are created, stored ones replaced; an equal row writes
	// nothing, so it is unchanged even when archived (an export round trip).
	var creates []initiative.Fields
	var replacements []initiative.Replacement
	var createRows, replaceRows []int
	for _, i := range keyRows {
		if results[i].Status == Failed {
			continue
		}
		e, stored := existing[i]
		switch {
		case !stored:
			creates, createRows = append(creates, rows[i]), append(createRows, i)
		case o.Mode == Create:
			results[i].Fail([]FieldError{{Field: "name", Code: "already_exists",
				Message: "an initiative with this name already exists (names compare case-insensitively); import with mode upsert to replace it"}})
		case initiative.Same(e, initiative.Merge(e, rows[i], true)):
			results[i].Status, results[i].ID = Unchanged, new(e.ID)
		default:
			replacements, replaceRows = append(replacements, initiative.Replacement{Current: e, Fields: rows[i], Replace: true}), append(replaceRows, i)
		}
	}
	created, err := initiative.Create(ctx, tx, actor, creates)
	if errors.Is(err, initiative.ErrNameTaken) {
		// Only if PostgreSQL's lower() pairs two names Go's does not.
		return nil, &ConflictError{"two initiatives of this import have the same name (names are unique ignoring case)"}
	}
	if err != nil {
		return nil, err
	}
	for k, i := range createRows {
		if created[k].Err != nil {
			results[i].Fail(initiativeRowErrors(created[k].Err))
			continue
		}
		results[i].Status = Created
		if !o.DryRun {
			results[i].ID = new(created[k].Initiative.ID)
		}
	}
	replaced, err := initiative.Replace(ctx, tx, actor, replacements)
	if errors.Is(err, initiative.ErrNameTaken) {
		return nil, &ConflictError{"two initiatives of this import have the same name (names are unique ignoring case)"}
	}
	if err != nil {
		return nil, err
	}
	for k, i := range replaceRows {
		if replaced[k].Err != nil {
			results[i].Fail(initiativeRowErrors(replaced[k].Err))
			continue
		}
		results[i].Status, results[i].ID = Updated, new(replaced[k].Initiative.ID)
	}
	return results, nil
}

// initiativeRowErrors are the row errors of an initiative operation's
// refusal: on the field it concerns, coded as the single route answers it
// (forbidden for a 403, conflict for a 409, invalid_value for a 400).
func initiativeRowErrors(err error) []FieldError {
	if te, ok := errors.AsType[*initiative.TransitionError](err); ok {
		if te.Forbidden {
			return []FieldError{{Field: "status", Code: "forbidden", Message: te.Error()}}
		}
		return []FieldError{{Field: "status", Code: "invalid_transition", Message: te.Explain()}}
	}
	if oe, ok := errors.AsType[*initiative.OwnerChangeError](err); ok {
		return []FieldError{{Field: "owner_id", Code: "forbidden", Message: oe.Error()}}
	}
	switch {
	case errors.Is(err, initiative.ErrLiveLimit), errors.Is(err, initiative.ErrArchived):
		return []FieldError{{Field: "name", Code: "conflict", Message: err.Error()}}
	case errors.Is(err, initiative.ErrEndBeforeStart):
		return []FieldError{{Field: "expected_end_date", Code: "invalid_value", Message: err.Error()}}
	}
	return RowErrors(nil, err)
}
