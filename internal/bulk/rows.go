package bulk

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/validation"
)

// What every resource's importer shares: a row read as the single route reads
// a body, its failures as a row's errors, and the initiatives rows belong to.

// RowErrors converts the readers' and the domain's failures to a row's errors.
func RowErrors(fields validation.Errors, err error) []FieldError {
	all := slices.Clone(fields)
	if many, ok := errors.AsType[validation.Errors](err); ok {
		all = append(all, many...)
	} else if one, ok := errors.AsType[*validation.Error](err); ok {
		all = append(all, one)
	}
	out := make([]FieldError, len(all))
	for i, f := range all {
		out[i] = FieldError{Field: f.Field, Code: f.Code, Message: f.Message}
	}
	return out
}

// RowID reads a row's id for an upsert: nil without one; a value that
// cannot name a record fails as the single routes' 404 does.
func RowID(rec Record) (id *uuid.UUID, ok bool) {
	if rec["id"] == nil || string(rec["id"]) == "null" {
		return nil, true
	}
	s := input.New(rec).Text("id", false, 100)
	if s == nil {
		return nil, false
	}
	v, err := uuid.Parse(*s)
	if err != nil {
		return nil, false
	}
	return &v, true
}

// InitiativeRows is the first half of importing records that each belong to
// an initiative (benefits, stakeholders): every record read by its single
// create route's reader (read), the initiatives they name locked as the single
// create locks one (with their child counts), and each row whose initiative
// is missing or not writable marked failed, as the single route answers it.
// fields[i] and initiativeIDs[i] are the row's; initiatives by id.
func InitiativeRows[F any](ctx context.Context, tx pgx.Tx, tenant uuid.UUID, records []Record, offset int,
	read func(*input.Object) F, initiativeOf func(F) *string, checkWritable func(initiative.Status) error,
) (results []Result, fields []F, initiativeIDs []uuid.UUID, initiatives map[uuid.UUID]dbsqlc.BulkInitiativesLockedRow, err error) {
	results, fields, initiativeIDs = NewResults(len(records), offset), make([]F, len(records)), make([]uuid.UUID, len(records))
	notFound := []FieldError{{Field: "initiative_id", Code: "not_found", Message: "no such initiative"}}
	var distinct []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for i, rec := range records {
		b := input.New(rec)
		fields[i] = read(b)
		_ = b.Done()
		if len(b.Errors()) > 0 {
			results[i].Fail(RowErrors(b.Errors(), nil))
			continue
		}
		id, err := uuid.Parse(*initiativeOf(fields[i]))
		if err != nil { // the single route: 404, an id that cannot name an initiative
			results[i].Fail(notFound)
			continue
		}
		initiativeIDs[i] = id
		if !seen[id] {
			seen[id] = true
			distinct = append(distinct, id)
		}
	}
	initiatives = map[uuid.UUID]dbsqlc.BulkInitiativesLockedRow{}
	if len(distinct) > 0 {
		list, err := db.Q.BulkInitiativesLocked(ctx, tx, dbsqlc.BulkInitiativesLockedParams{TenantID: tenant, Ids: distinct})
		if err != nil {
			return nil, nil, nil, nil, err
		}
		for _, l := range list {
			initiatives[l.ID] = l
		}
	}
	for i := range records {
		if results[i].Status == Failed {
			continue
		}
		in, ok := initiatives[initiativeIDs[i]]
		if !ok {
			results[i].Fail(notFound)
			continue
		}
		if err := checkWritable(initiative.Status(in.Status)); err != nil {
			results[i].Fail([]FieldError{{Field: "initiative_id", Code: "conflict", Message: err.Error()}})
		}
	}
	return results, fields, initiativeIDs, initiatives, nil
}
