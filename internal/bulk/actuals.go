package bulk

// Importing actuals: a row is the body of POST /v1/benefits/{id}/actuals plus
// benefit_id, read by the same benefit.ReadActual and filed by the same
// benefit.FileActuals (its checks, its event); its key is benefit_id + period.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/input"
)

// ImportActuals files a page of actuals rows.
func ImportActuals(ctx context.Context, tx pgx.Tx, a Actor, o Options, records []Record, offset int) ([]Result, error) {
	results := NewResults(len(records), offset)
	var inputs []benefit.ActualInput
	var rows []int // inputs[k] is records[rows[k]]'s
	for i, rec := range records {
		b := input.New(rec)
		id := b.Text("benefit_id", true, maxIDLen)
		fields := benefit.ReadActual(b)
		b.Ignore("id")
		_ = b.Done()
		var benefitID uuid.UUID
		if id != nil {
			parsed, err := uuid.Parse(*id)
			if err != nil {
				b.Fail("benefit_id", "invalid_format", "must be a benefit id")
			}
			benefitID = parsed
		}
		if len(b.Errors()) > 0 {
			results[i].Fail(RowErrors(b.Errors(), nil))
			continue
		}
		inputs, rows = append(inputs, fields.Input(benefitID)), append(rows, i)
	}
	if len(inputs) == 0 {
		return results, nil
	}
	actor := benefit.Actor{TenantID: a.TenantID, Subject: a.Subject}
	outcomes, err := benefit.FileActuals(ctx, tx, actor, inputs, benefit.FileOptions{CreateOnly: o.Mode == Create, Now: time.Now()})
	if err != nil {
		return nil, err
	}
	for k, out := range outcomes {
		r := &results[rows[k]]
		if out.Err != nil {
			r.Fail(actualErrors(out.Err, offset, rows))
			continue
		}
		switch out.Filing {
		case benefit.FirstValue:
			r.Status = Created
			if !o.DryRun {
				r.ID = new(out.Actual.ID)
			}
		case benefit.Correction:
			r.Status, r.ID = Updated, new(out.Actual.ID)
		default:
			r.Status, r.ID = Unchanged, new(out.Actual.ID)
		}
	}
	return results, nil
}

// maxIDLen bounds an id field of a row (the API's limit on short texts).
const maxIDLen = 100

// actualErrors is a row's errors for why FileActuals refused its input.
func actualErrors(err error, offset int, rows []int) []FieldError {
	if dup, ok := errors.AsType[*benefit.DuplicateError](err); ok {
		return []FieldError{{Field: "period", Code: "duplicate", Message: fmt.Sprintf("row %d already files this benefit and period", offset+rows[dup.First])}}
	}
	switch {
	case errors.Is(err, benefit.ErrNotFound):
		return []FieldError{{Field: "benefit_id", Code: "not_found", Message: "no such benefit"}}
	case errors.Is(err, benefit.ErrInitiativeArchived):
		return []FieldError{{Field: "benefit_id", Code: "conflict", Message: err.Error()}}
	case errors.Is(err, benefit.ErrActualExists):
		return []FieldError{{Field: "period", Code: "already_exists",
			Message: "this benefit already has an actual for the period; import with mode upsert to correct it"}}
	case errors.Is(err, benefit.ErrTooManyRevisions):
		return []FieldError{{Field: "value", Code: "conflict", Message: err.Error()}}
	}
	return RowErrors(nil, err)
}
