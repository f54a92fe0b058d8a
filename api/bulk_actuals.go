package api

// Bulk import and export of actuals: a row is the body of POST
// /v1/benefits/{id}/actuals plus benefit_id, read and checked by the same
// readActual and actualInput.check; its key is benefit_id + period. The
// writes are a few multi-row statements whatever the row count.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/bulk"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/outbox"
)

// actualExportColumns are the fields of an exported actual (id is read-only on import).
var actualExportColumns = []string{"id", "benefit_id", "period", "value", "notes", "evidence_url"}

type actualKey struct {
	benefit uuid.UUID
	period  finance.Month
}

// actualRow is one import row on its way through the checks.
type actualRow struct {
	benefitID uuid.UUID
	in        actualInput
	key       actualKey
	next      benefit.Filed
}

func importActuals(ctx context.Context, t pgx.Tx, a bulk.Actor, o bulk.Options, records []bulk.Record, offset int) ([]bulk.Result, error) {
	now := time.Now()
	results := bulk.NewResults(len(records), offset)
	rows := make([]actualRow, len(records))
	// 1. Each row as the single route reads its body.
	var benefitIDs []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for i, rec := range records {
		b := input.New(rec)
		id := b.Text("benefit_id", true, maxShortTextLen)
		rows[i].in = readActual(b)
		b.Ignore("id")
		_ = b.Done()
		if id != nil {
			parsed, err := uuid.Parse(*id)
			if err != nil {
				b.Fail("benefit_id", "invalid_format", "must be a benefit id")
			}
			rows[i].benefitID = parsed
		}
		if len(b.Errors()) > 0 {
			results[i].Fail(bulk.RowErrors(b.Errors(), nil))
			continue
		}
		if !seen[rows[i].benefitID] {
			seen[rows[i].benefitID] = true
			benefitIDs = append(benefitIDs, rows[i].benefitID)
		}
	}
	// 2. The benefits, locked as the single route locks one; the domain checks.
	locked := map[uuid.UUID]dbsqlc.BenefitGetLockedRow{}
	var stamp time.Time
	if len(benefitIDs) > 0 {
		list, err := db.Q.BulkBenefitsLocked(ctx, t, dbsqlc.BulkBenefitsLockedParams{TenantID: a.TenantID, Ids: benefitIDs})
		if err != nil {
			return nil, err
		}
		for _, l := range list {
			locked[l.Benefit.ID] = dbsqlc.BenefitGetLockedRow{Benefit: l.Benefit, InitiativeName: l.InitiativeName, InitiativeStatus: l.InitiativeStatus}
			stamp = l.StampedAt
		}
	}
	firstOf := map[actualKey]int{}
	var keyBenefits []uuid.UUID
	var keyPeriods []time.Time
	for i := range rows {
		if results[i].Status == bulk.Failed {
			continue
		}
		l, ok := locked[rows[i].benefitID]
		if !ok {
			results[i].Fail([]bulk.FieldError{{Field: "benefit_id", Code: "not_found", Message: "no such benefit"}})
			continue
		}
		if err := benefit.CheckWritable(initiative.Status(l.InitiativeStatus)); err != nil {
			results[i].Fail([]bulk.FieldError{{Field: "benefit_id", Code: "conflict", Message: err.Error()}})
			continue
		}
		filed, next, err := rows[i].in.check(l.Benefit, now)
		if err != nil {
			results[i].Fail(bulk.RowErrors(nil, err))
			continue
		}
		rows[i].key, rows[i].next = actualKey{rows[i].benefitID, filed}, next
		if j, dup := firstOf[rows[i].key]; dup {
			results[i].Fail([]bulk.FieldError{{Field: "period", Code: "duplicate",
				Message: fmt.Sprintf("row %d already files this benefit and period", offset+j)}})
			continue
		}
		firstOf[rows[i].key] = i
		keyBenefits, keyPeriods = append(keyBenefits, rows[i].benefitID), append(keyPeriods, filed.FirstDay())
	}
	// 3. What is stored at those keys decides created, updated or unchanged.
	existing := map[actualKey]dbsqlc.BulkActualsExistingRow{}
	if len(keyBenefits) > 0 {
		list, err := db.Q.BulkActualsExisting(ctx, t, dbsqlc.BulkActualsExistingParams{TenantID: a.TenantID, BenefitIds: keyBenefits, Periods: keyPeriods})
		if err != nil {
			return nil, err
		}
		for _, e := range list {
			existing[actualKey{e.BenefitActual.BenefitID, finance.MonthOfTime(e.BenefitActual.Period)}] = e
		}
	}
	var ins dbsqlc.BulkActualsInsertParams
	var upd dbsqlc.BulkActualsCorrectParams
	var events [][]byte
	for i := range rows {
		if results[i].Status == bulk.Failed {
			continue
		}
		r, l := rows[i], locked[rows[i].benefitID]
		var previous *benefit.Filed
		e, stored := existing[r.key]
		if stored {
			if o.Mode == bulk.Create {
				results[i].Fail([]bulk.FieldError{{Field: "period", Code: "already_exists",
					Message: "this benefit already has an actual for the period; import with mode upsert to correct it"}})
				continue
			}
			previous = &benefit.Filed{Value: money.Stored(e.BenefitActual.Value), Notes: e.BenefitActual.Notes, EvidenceURL: e.BenefitActual.EvidenceUrl}
		}
		var actual dbsqlc.BenefitActual
		switch benefit.ClassifyFiling(previous, r.next) {
		case benefit.SameValue:
			results[i].Status, results[i].ID = bulk.Unchanged, new(e.BenefitActual.ID)
			continue
		case benefit.FirstValue:
			actual = dbsqlc.BenefitActual{TenantID: a.TenantID, ID: uuid.New(), BenefitID: r.benefitID, Period: r.key.period.FirstDay(),
				CreatedAt: stamp, UpdatedAt: stamp}
			ins.Ids, ins.BenefitIds, ins.Periods = append(ins.Ids, actual.ID), append(ins.BenefitIds, actual.BenefitID), append(ins.Periods, actual.Period)
			ins.Values, ins.Notes, ins.EvidenceUrls = append(ins.Values, money.FromInput(r.next.Value)), append(ins.Notes, r.next.Notes), append(ins.EvidenceUrls, deref(r.next.EvidenceURL))
			results[i].Status = bulk.Created
			if !o.DryRun {
				results[i].ID = new(actual.ID)
			}
		case benefit.Correction:
			if err := benefit.CheckCanCorrect(int(e.Revisions)); err != nil {
				results[i].Fail([]bulk.FieldError{{Field: "value", Code: "conflict", Message: err.Error()}})
				continue
			}
			actual = e.BenefitActual
			actual.UpdatedAt = stamp
			upd.Ids, upd.Values = append(upd.Ids, actual.ID), append(upd.Values, money.FromInput(r.next.Value))
			upd.Notes, upd.EvidenceUrls = append(upd.Notes, r.next.Notes), append(upd.EvidenceUrls, deref(r.next.EvidenceURL))
			results[i].Status, results[i].ID = bulk.Updated, new(actual.ID)
		}
		actual.Value, actual.Notes, actual.EvidenceUrl, actual.RecordedBy = money.FromInput(r.next.Value), r.next.Notes, r.next.EvidenceURL, a.Subject
		data, err := json.Marshal(actualRecorded(l, actual, previous))
		if err != nil {
			return nil, err
		}
		events = append(events, data)
	}
	// 4. The writes: one statement each for the new actuals, the corrections and the events.
	if len(ins.Ids) > 0 {
		ins.TenantID, ins.RecordedBy = a.TenantID, a.Subject
		if err := db.Q.BulkActualsInsert(ctx, t, ins); err != nil {
			return nil, err
		}
	}
	if len(upd.Ids) > 0 {
		upd.TenantID, upd.ChangedBy = a.TenantID, a.Subject
		if err := db.Q.BulkActualsCorrect(ctx, t, upd); err != nil {
			return nil, err
		}
	}
	return results, outbox.WriteMany(ctx, t, a.TenantID, outbox.BenefitActualRecorded, events)
}

// exportActuals reads a page of the tenant's actuals in (benefit, period) order.
func exportActuals(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkActualsExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterBenefit, p.AfterPeriod = cur.after[0].(uuid.UUID), cur.after[1].(time.Time)
	}
	rows, err := db.Q.BulkActualsExport(cur.ctx, cur.tx, p)
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		out.records[i] = map[string]any{"id": r.ID.String(), "benefit_id": r.BenefitID.String(),
			"period": finance.MonthOfTime(r.Period).String(), "value": money.Stored(r.Value), "notes": r.Notes, "evidence_url": r.EvidenceUrl}
		out.after = []any{r.BenefitID, r.Period}
	}
	return out
}
