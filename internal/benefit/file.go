package benefit

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/wire"
)

// Actor is who writes: the tenant and the subject recorded on the rows
// (recorded_by, changed_by). An integration's sync writes as its source
// (integration/<id>), which its actuals also carry in `source`.
type Actor struct {
	TenantID uuid.UUID
	Subject  string
	Source   *string // nil for a person: a person's filing clears the source of a synced actual
}

// ActualInput is one actual to file: a value for a period of a benefit.
type ActualInput struct {
	BenefitID   uuid.UUID
	Period      string          // YYYY-MM as sent; a quarterly benefit files any month under its quarter's first
	Value       decimal.Decimal // as stored: a person's number, or a feed's exact decimal
	Notes       *string         // nil keeps the stored notes (a feed sends none; a new actual gets "")
	EvidenceURL *string
}

// FileOptions are the choices of one batch.
type FileOptions struct {
	CreateOnly bool      // an actual already stored for the period fails with ErrActualExists (an import in mode create)
	LastWins   bool      // two inputs for one period: the later files, the earlier is superseded (a feed's page, oldest first)
	Now        time.Time // the clock of "period in the future"
}

// Outcome is what filing one input did: the filing and the actual as stored
// after it, or why it failed (Err).
type Outcome struct {
	Filing Filing
	Actual dbsqlc.BenefitActual
	Err    error
}

// ErrActualExists: the period already has an actual and the batch only creates.
// An input also fails with ErrNotFound (no such benefit in the tenant),
// ErrInitiativeArchived, ErrTooManyRevisions, or the validation.Errors of its
// value, period and evidence_url.
var ErrActualExists = errors.New("this benefit already has an actual for the period")

// DuplicateError: an earlier input of the batch (First, its index) files the
// same benefit and period; one batch files a period once.
type DuplicateError struct{ First int }

func (e *DuplicateError) Error() string {
	return "an earlier input of the batch files this benefit and period"
}

// SupersededError: with FileOptions.LastWins, a later input of the batch (By,
// its index) files the same benefit and period instead of this one.
type SupersededError struct{ By int }

func (e *SupersededError) Error() string {
	return "a later input of the batch files this benefit and period"
}

// ActualRecordedEvent is the data of a benefit.actual_recorded event, the same
// whichever path filed the actual.
type ActualRecordedEvent struct {
	Benefit struct {
		ID                   string  `json:"id"`
		Name                 string  `json:"name"`
		Unit                 string  `json:"unit"`
		Currency             *string `json:"currency"`
		MeasurementFrequency string  `json:"measurement_frequency"`
	} `json:"benefit"`
	Initiative struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"initiative"`
	ActualID      string   `json:"actual_id"`
	Period        string   `json:"period"`
	Value         float64  `json:"value"`
	PreviousValue *float64 `json:"previous_value"` // null unless this corrects an earlier value
	Corrected     bool     `json:"corrected"`
	Notes         string   `json:"notes"`
	EvidenceURL   *string  `json:"evidence_url"`
	RecordedBy    string   `json:"recorded_by"`
	RecordedAt    string   `json:"recorded_at"`
}

type actualKey struct {
	benefit uuid.UUID
	period  finance.Month
}

// FileActuals is the one way an actual is recorded: the single route (a batch
// of one), an actuals import (a page of rows) and an integration's sync (a
// page, as its source) all call it. Every input gets the same checks (benefit
// of the tenant, initiative not archived, value, period, evidence_url, at
// most MaxRevisions corrections), and every filing that changes something
// emits one benefit.actual_recorded, the events of a batch in one outbox
// batch row. The writes are a few multi-row statements whatever the batch size.
// The benefits are locked as a single write locks one (benefit for update,
// initiative for share). outcomes[i] is inputs[i]'s.
func FileActuals(ctx context.Context, tx pgx.Tx, actor Actor, inputs []ActualInput, opts FileOptions) ([]Outcome, error) {
	outcomes := make([]Outcome, len(inputs))
	var benefitIDs []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, in := range inputs {
		if !seen[in.BenefitID] {
			seen[in.BenefitID] = true
			benefitIDs = append(benefitIDs, in.BenefitID)
		}
	}
	locked, stamp, err := lockBenefits(ctx, tx, actor.TenantID, benefitIDs)
	if err != nil {
		return nil, err
	}
	// 1. The rules of each input on its own.
	keys := make([]actualKey, len(inputs))
	firstOf := map[actualKey]int{}
	var keyBenefits []uuid.UUID
	var keyPeriods []time.Time
	for i, in := range inputs {
		l, ok := locked[in.BenefitID]
		if !ok {
			outcomes[i].Err = ErrNotFound
			continue
		}
		if err := CheckWritable(initiative.Status(l.InitiativeStatus)); err != nil {
			outcomes[i].Err = err
			continue
		}
		var errs validation.Errors
		errs.Append(CheckValue("value", in.Value.InexactFloat64()))
		filed, perr := CheckActualPeriod(Frequency(l.Benefit.MeasurementFrequency), in.Period, l.Benefit.ExpectedStartDate, opts.Now)
		errs.Append(perr)
		if in.EvidenceURL != nil {
			errs.Append(CheckEvidenceURL(*in.EvidenceURL))
		}
		if err := errs.Err(); err != nil {
			outcomes[i].Err = err
			continue
		}
		keys[i] = actualKey{in.BenefitID, filed}
		if j, dup := firstOf[keys[i]]; dup && !opts.LastWins {
			outcomes[i].Err = &DuplicateError{First: j}
			continue
		} else if dup {
			outcomes[j].Err, firstOf[keys[i]] = &SupersededError{By: i}, i
			continue
		}
		firstOf[keys[i]] = i
		keyBenefits, keyPeriods = append(keyBenefits, in.BenefitID), append(keyPeriods, filed.FirstDay())
	}
	// 2. What is stored at those keys decides a first value, a correction or nothing.
	existing, err := lockActuals(ctx, tx, actor.TenantID, keyBenefits, keyPeriods)
	if err != nil {
		return nil, err
	}
	var ins dbsqlc.BulkActualsInsertParams
	var upd dbsqlc.BulkActualsCorrectParams
	var events [][]byte
	for i, in := range inputs {
		if outcomes[i].Err != nil {
			continue
		}
		next := Filed{Value: money.Stored(in.Value), EvidenceURL: in.EvidenceURL}
		var previous *Filed
		e, stored := existing[keys[i]]
		if stored {
			if opts.CreateOnly {
				outcomes[i].Err = ErrActualExists
				continue
			}
			previous = &Filed{Value: money.Stored(e.Actual.Value), Notes: e.Actual.Notes, EvidenceURL: e.Actual.EvidenceUrl}
			next.Notes = e.Actual.Notes
		}
		if in.Notes != nil {
			next.Notes = *in.Notes
		}
		filing := ClassifyFiling(previous, next)
		var actual dbsqlc.BenefitActual
		switch filing {
		case SameValue:
			outcomes[i] = Outcome{Filing: SameValue, Actual: e.Actual}
			continue
		case FirstValue:
			actual = dbsqlc.BenefitActual{TenantID: actor.TenantID, ID: uuid.New(), BenefitID: in.BenefitID, Period: keys[i].period.FirstDay(),
				CreatedAt: stamp}
			ins.Ids, ins.BenefitIds, ins.Periods = append(ins.Ids, actual.ID), append(ins.BenefitIds, actual.BenefitID), append(ins.Periods, actual.Period)
			ins.Values, ins.Notes, ins.EvidenceUrls = append(ins.Values, in.Value), append(ins.Notes, next.Notes), append(ins.EvidenceUrls, deref(next.EvidenceURL))
		case Correction:
			if err := CheckCanCorrect(int(e.Revisions)); err != nil {
				outcomes[i].Err = err
				continue
			}
			actual = e.Actual
			upd.Ids, upd.Values = append(upd.Ids, actual.ID), append(upd.Values, in.Value)
			upd.Notes, upd.EvidenceUrls = append(upd.Notes, next.Notes), append(upd.EvidenceUrls, deref(next.EvidenceURL))
		}
		actual.Value, actual.Notes, actual.EvidenceUrl = in.Value, next.Notes, next.EvidenceURL
		actual.RecordedBy, actual.Source, actual.UpdatedAt = actor.Subject, actor.Source, stamp
		outcomes[i] = Outcome{Filing: filing, Actual: actual}
		data, err := json.Marshal(actualRecorded(locked[in.BenefitID], actual, previous))
		if err != nil {
			return nil, err
		}
		events = append(events, data)
	}
	// 3. The writes: one statement each for the new actuals, the corrections (with their revisions) and the events.
	if len(ins.Ids) > 0 {
		ins.TenantID, ins.RecordedBy, ins.Source = actor.TenantID, actor.Subject, actor.Source
		if err := db.Q.BulkActualsInsert(ctx, tx, ins); err != nil {
			return nil, err
		}
	}
	if len(upd.Ids) > 0 {
		upd.TenantID, upd.ChangedBy, upd.Source = actor.TenantID, actor.Subject, actor.Source
		if err := db.Q.BulkActualsCorrect(ctx, tx, upd); err != nil {
			return nil, err
		}
	}
	if len(events) == 1 { // a plain row, as every single write's event; more share one batch row
		_, err := outbox.Write(ctx, tx, actor.TenantID, outbox.BenefitActualRecorded, json.RawMessage(events[0]))
		return outcomes, err
	}
	return outcomes, outbox.WriteMany(ctx, tx, actor.TenantID, outbox.BenefitActualRecorded, events)
}

func actualRecorded(l lockedBenefit, a dbsqlc.BenefitActual, previous *Filed) ActualRecordedEvent {
	b := l.Benefit
	var e ActualRecordedEvent
	e.Benefit.ID, e.Benefit.Name, e.Benefit.Unit, e.Benefit.Currency, e.Benefit.MeasurementFrequency = b.ID.String(), b.Name, b.Unit, b.Currency, b.MeasurementFrequency
	e.Initiative.ID, e.Initiative.Name = b.InitiativeID.String(), l.InitiativeName
	e.ActualID, e.Period, e.Value = a.ID.String(), finance.MonthOfTime(a.Period).String(), money.Stored(a.Value)
	if previous != nil {
		e.PreviousValue, e.Corrected = new(previous.Value), true
	}
	e.Notes, e.EvidenceURL, e.RecordedBy, e.RecordedAt = a.Notes, a.EvidenceUrl, a.RecordedBy, wire.Timestamp(a.UpdatedAt)
	return e
}

// lockedBenefit is a benefit locked for a write of its actuals or fields, with its initiative's
// name and status (the initiative locked for share).
type lockedBenefit struct {
	Benefit          dbsqlc.Benefit
	InitiativeName   string
	InitiativeStatus string
}

// lockBenefits locks the benefits of ids that the tenant has (BulkBenefitsLocked), by id, and
// returns them with the transaction's time, what now() stamps the rows the caller writes with
// (zero when ids is empty).
func lockBenefits(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]lockedBenefit, time.Time, error) {
	locked := map[uuid.UUID]lockedBenefit{}
	var stamp time.Time
	if len(ids) == 0 {
		return locked, stamp, nil
	}
	list, err := db.Q.BulkBenefitsLocked(ctx, tx, dbsqlc.BulkBenefitsLockedParams{TenantID: tenantID, Ids: ids})
	if err != nil {
		return nil, stamp, err
	}
	for _, l := range list {
		locked[l.ID] = lockedBenefit{
			Benefit: dbsqlc.Benefit{
				TenantID: l.TenantID, ID: l.ID, InitiativeID: l.InitiativeID, Name: l.Name, Description: l.Description,
				Category: l.Category, ExpectedValue: l.ExpectedValue, Currency: l.Currency, Unit: l.Unit,
				MeasurementFrequency: l.MeasurementFrequency, ExpectedStartDate: l.ExpectedStartDate,
				ExpectedEndDate: l.ExpectedEndDate, Status: l.Status, OwnerID: l.OwnerID, CreatedAt: l.CreatedAt,
				UpdatedAt: l.UpdatedAt, ExternalKey: l.ExternalKey,
			},
			InitiativeName: l.InitiativeName, InitiativeStatus: l.InitiativeStatus,
		}
		stamp = l.StampedAt
	}
	return locked, stamp, nil
}

// storedActual is an actual stored at a key being filed, locked, with its revision count.
type storedActual struct {
	Actual    dbsqlc.BenefitActual
	Revisions int64
}

// lockActuals locks the tenant's actuals stored at the (benefit, period) keys
// (BulkActualsExisting) and returns them by key.
func lockActuals(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID, benefits []uuid.UUID, periods []time.Time) (map[actualKey]storedActual, error) {
	stored := map[actualKey]storedActual{}
	if len(benefits) == 0 {
		return stored, nil
	}
	list, err := db.Q.BulkActualsExisting(ctx, tx, dbsqlc.BulkActualsExistingParams{TenantID: tenantID, BenefitIds: benefits, Periods: periods})
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		stored[actualKey{e.BenefitID, finance.MonthOfTime(e.Period)}] = storedActual{
			Actual: dbsqlc.BenefitActual{
				TenantID: e.TenantID, ID: e.ID, BenefitID: e.BenefitID, Period: e.Period, Value: e.Value, Notes: e.Notes,
				EvidenceUrl: e.EvidenceUrl, RecordedBy: e.RecordedBy, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, Source: e.Source,
			},
			Revisions: e.Revisions,
		}
	}
	return stored, nil
}
