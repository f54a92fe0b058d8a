package bulk

// Importing benefits: a row is the body of POST /v1/benefits, read by the
// same benefit.ReadFields and saved by the same benefit.SaveBenefits as the
// single create and PUT (its rules, the creator as owner); its key is
// initiative_id + name (compared case-insensitively, as the unique index
// does), which the importer matches to stored benefits first, with the
// page's duplicates and external keys. An existing benefit is replaced as
// PUT /v1/benefits/{id} replaces it (plan included). Neither single route
// emits an event, so neither does the import.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/input"
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
	results, fields, initiativeIDs, _, err := InitiativeRows(ctx, tx, a.TenantID, records, offset,
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
	// 3. The benefits stored at those keys, which the rows replace.
	existing := map[int]dbsqlc.BulkBenefitsExistingRow{} // by row
	if len(keyInitiatives) > 0 {
		list, err := db.Q.BulkBenefitsExisting(ctx, tx, dbsqlc.BulkBenefitsExistingParams{TenantID: a.TenantID, InitiativeIds: keyInitiatives, Names: keyNames})
		if err != nil {
			return nil, err
		}
		for _, e := range list {
			existing[keyRows[e.KeyN-1]] = e
		}
	}
	var changes []benefit.Change
	var changed []int // changes[k] is records[changed[k]]'s
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
		// PUT's replace over the stored benefit, or create's over none.
		change := benefit.Change{InitiativeID: r.initiativeID, Fields: r.f, Replace: true}
		change.Fields.InitiativeID = nil // the row's initiative_id names the initiative itself: nothing to compare
		if stored {
			change.ID = new(e.Benefit.ID)
		}
		changes, changed = append(changes, change), append(changed, i)
	}
	if len(changes) == 0 {
		return results, nil
	}
	outcomes, err := benefit.SaveBenefits(ctx, tx, benefit.Actor{TenantID: a.TenantID, Subject: a.Subject}, changes, benefit.SaveOptions{})
	switch {
	case errors.Is(err, benefit.ErrNameTaken): // only if PostgreSQL's lower() pairs two names Go's does not
		return nil, &ConflictError{"two benefits of this import have the same name in one initiative"}
	case errors.Is(err, benefit.ErrExternalKeyTaken): // a key moved between benefits the import writes
		return nil, &ConflictError{"an external_key of this import moves between benefits; import the change in two steps"}
	case err != nil:
		return nil, err
	}
	for k, out := range outcomes {
		res := &results[changed[k]]
		redefined, isRedefinition := errors.AsType[*benefit.RedefinitionError](out.Err)
		switch {
		case isRedefinition:
			res.Fail([]FieldError{{Field: redefined.Field, Code: "conflict", Message: out.Err.Error()}})
		case errors.Is(out.Err, benefit.ErrLimitReached), errors.Is(out.Err, benefit.ErrInitiativeArchived):
			res.Fail([]FieldError{{Field: "initiative_id", Code: "conflict", Message: out.Err.Error()}})
		case errors.Is(out.Err, benefit.ErrInitiativeNotFound), errors.Is(out.Err, benefit.ErrNotFound):
			res.Fail([]FieldError{{Field: "initiative_id", Code: "not_found", Message: "no such initiative"}})
		case out.Err != nil:
			res.Fail(RowErrors(nil, out.Err))
		case out.Result == benefit.Created:
			res.Status = Created
			if !o.DryRun {
				res.ID = new(out.Saved.Benefit.ID)
			}
		case out.Result == benefit.Updated:
			res.Status, res.ID = Updated, new(out.Saved.Benefit.ID)
		default:
			res.Status, res.ID = Unchanged, new(out.Saved.Benefit.ID)
		}
	}
	return results, nil
}
