// Package export holds the rules and the storage of business-case exports:
// what an export request may ask for, the snapshot a render
// starts from (one tenant transaction → render.Case), and the blob store the
// rendered files live in (PostgreSQL, so every API instance serves them).
package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/initiativevalue"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/render"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/valuation"
)

// Status of an export.
type Status string

const (
	Queued    Status = "queued"
	Running   Status = "running"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	Canceled  Status = "canceled" // its run was canceled (REST or the Temporal UI)
)

// DefaultRetention is how long a rendered file is served when the
// configuration does not say.
const DefaultRetention = 7 * 24 * time.Hour

// Request is what a client asks for.
type Request struct {
	Format            render.Format
	IncludeAppendices bool
	Watermark         string
}

// NotReadyError: the file of an export cannot be served, because the export
// has not succeeded (yet) or its file expired. Reason is written for the
// client: what happened and what to do.
type NotReadyError struct {
	Reason string
}

func (e *NotReadyError) Error() string { return "export: not ready: " + e.Reason }

// Check validates a request: a known format, a watermark of at most 64
// characters of valid UTF-8.
func (r Request) Check() error {
	var errs validation.Errors
	if !slices.Contains(render.Formats, r.Format) {
		errs.Add("format", validation.CodeInvalidValue, "must be one of pdf, docx, pptx")
	}
	if !utf8.ValidString(r.Watermark) {
		errs.Add("watermark", validation.CodeInvalidFormat, "must be valid UTF-8")
	} else if n := utf8.RuneCountInString(r.Watermark); n > render.MaxWatermarkRunes {
		errs.Add("watermark", validation.CodeTooLong, "has %d characters, at most %d", n, render.MaxWatermarkRunes)
	}
	return errs.Err()
}

// CheckDownload says whether an export's file can be served at now (nil),
// or why not (a *NotReadyError).
func CheckDownload(status Status, expiresAt *time.Time, now time.Time) error {
	if status != Succeeded {
		return &NotReadyError{Reason: fmt.Sprintf("the export is %s; download it once it has succeeded", status)}
	}
	if expiresAt != nil && !now.Before(*expiresAt) {
		return &NotReadyError{Reason: fmt.Sprintf("the file expired at %s; request a new export", expiresAt.UTC().Format(time.RFC3339))}
	}
	return nil
}

// FileName is the Content-Disposition file name of an export: the case's
// name made safe for a file system, its version and the format's extension.
func FileName(caseName string, version int32, f render.Format) string {
	out := make([]rune, 0, len(caseName))
	for _, r := range caseName {
		switch {
		case r < 0x20 || r == 0x7f || slices.Contains([]rune(`/\:*?"<>|;`), r):
			out = append(out, '_')
		default:
			out = append(out, r)
		}
	}
	if len(out) > 100 {
		out = out[:100]
	}
	return fmt.Sprintf("%s v%d%s", string(out), version, f.Extension())
}

// Job is what the export workflow knows of one export.
type Job struct {
	TenantID uuid.UUID
	ID       uuid.UUID
}

// Spec is a started export's choices.
type Spec struct {
	CaseID            uuid.UUID
	Format            render.Format
	IncludeAppendices bool
	Watermark         string
	RequestedBy       string
}

// BlobStore keeps rendered files. Put stores the file of a running export
// and marks it succeeded (false: it had already finished, e.g. failed on
// timeout); Get is the API's side.
type BlobStore interface {
	Put(ctx context.Context, j Job, content []byte, retention time.Duration) (bool, error)
}

// Store is the PostgreSQL implementation: the file is the row's content.
type Store struct {
	Pool *pgxpool.Pool
}

var _ BlobStore = Store{}

// Start marks the export running; false when it is gone or already
// finished (nothing left to do).
func (s Store) Start(ctx context.Context, j Job) (ok bool, err error) {
	err = db.InTenant(ctx, s.Pool, j.TenantID, func(tx pgx.Tx) error {
		n, err := db.Q.ExportStart(ctx, tx, dbsqlc.ExportStartParams{TenantID: j.TenantID, ID: j.ID})
		ok = n == 1
		return err
	})
	return ok, err
}

// Spec reads the choices of an export still to render (queued or running);
// ok is false when it is gone or already finished.
func (s Store) Spec(ctx context.Context, j Job) (spec Spec, ok bool, err error) {
	err = db.InTenant(ctx, s.Pool, j.TenantID, func(tx pgx.Tx) error {
		row, err := db.Q.ExportSpec(ctx, tx, dbsqlc.ExportSpecParams{TenantID: j.TenantID, ID: j.ID})
		if db.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		spec = Spec{CaseID: row.BusinessCaseID, Format: render.Format(row.Format), IncludeAppendices: row.IncludeAppendices, RequestedBy: row.RequestedBy}
		if row.Watermark != nil {
			spec.Watermark = *row.Watermark
		}
		return nil
	})
	return spec, ok, err
}

// Progress records progress (0..100) of a running export.
func (s Store) Progress(ctx context.Context, j Job, pct int) error {
	return db.InTenant(ctx, s.Pool, j.TenantID, func(tx pgx.Tx) error {
		return db.Q.ExportProgress(ctx, tx, dbsqlc.ExportProgressParams{TenantID: j.TenantID, ID: j.ID, Progress: int32(min(max(pct, 0), 100))})
	})
}

// Put implements BlobStore.
func (s Store) Put(ctx context.Context, j Job, content []byte, retention time.Duration) (bool, error) {
	sum := sha256.Sum256(content)
	var n int64
	err := db.InTenant(ctx, s.Pool, j.TenantID, func(tx pgx.Tx) error {
		var err error
		n, err = db.Q.ExportStore(ctx, tx, dbsqlc.ExportStoreParams{
			TenantID: j.TenantID, ID: j.ID, Content: content, Size: new(int64(len(content))),
			Sha256: new(hex.EncodeToString(sum[:])), RetentionSeconds: retention.Seconds(),
		})
		return err
	})
	return n == 1, err
}

// Fail marks an unfinished export failed with reason.
func (s Store) Fail(ctx context.Context, j Job, reason string) error {
	return db.InTenant(ctx, s.Pool, j.TenantID, func(tx pgx.Tx) error {
		_, err := db.Q.ExportFail(ctx, tx, dbsqlc.ExportFailParams{TenantID: j.TenantID, ID: j.ID, Error: &reason})
		return err
	})
}

// Cancel marks an unfinished export canceled with reason (its run was canceled).
func (s Store) Cancel(ctx context.Context, j Job, reason string) error {
	return db.InTenant(ctx, s.Pool, j.TenantID, func(tx pgx.Tx) error {
		_, err := CancelExport(ctx, tx, j, reason)
		return err
	})
}

// CancelExport marks a queued or running export canceled in the caller's
// transaction; false when it had finished (it keeps its outcome).
func CancelExport(ctx context.Context, tx dbsqlc.DBTX, j Job, reason string) (bool, error) {
	n, err := db.Q.ExportCancel(ctx, tx, dbsqlc.ExportCancelParams{TenantID: j.TenantID, ID: j.ID, Error: &reason})
	return n > 0, err
}

// RequestedEvent is the data of the internal business_case.export_requested
// event whose relay handler starts the export's workflow.
type RequestedEvent struct {
	ID             string `json:"id"`
	BusinessCaseID string `json:"business_case_id"`
	Format         string `json:"format"`
	CaseName       string `json:"case_name"`
	CaseVersion    int32  `json:"case_version"`
}

// Queue queues an export of a business case in the caller's tenant
// transaction: the row (queued) and the event that starts its workflow. req
// has been checked (Request.Check); the case must exist (the driver's
// not-found otherwise). POST /v1/business-cases/{id}/export and the agents'
// business_case_export start both come here.
func Queue(ctx context.Context, tx pgx.Tx, tenantID, caseID uuid.UUID, req Request, requestedBy string) (dbsqlc.ExportCreateRow, error) {
	bc, err := db.Q.BusinessCaseGet(ctx, tx, dbsqlc.BusinessCaseGetParams{TenantID: tenantID, ID: caseID})
	if err != nil {
		return dbsqlc.ExportCreateRow{}, err
	}
	var watermark *string
	if req.Watermark != "" {
		watermark = &req.Watermark
	}
	row, err := db.Q.ExportCreate(ctx, tx, dbsqlc.ExportCreateParams{
		TenantID: tenantID, BusinessCaseID: bc.ID, Format: string(req.Format), IncludeAppendices: req.IncludeAppendices,
		Watermark: watermark, RequestedBy: requestedBy,
	})
	if err != nil {
		return row, err
	}
	_, err = outbox.Write(ctx, tx, tenantID, outbox.BusinessCaseExportRequested, RequestedEvent{
		ID: row.ID.String(), BusinessCaseID: bc.ID.String(), Format: row.Format, CaseName: bc.Name, CaseVersion: bc.Version,
	})
	return row, err
}

// Snapshot reads everything the document shows in one tenant transaction:
// for an approved version the document frozen at its approval (Freeze), so
// its exports never move; otherwise the case, its initiative, the figures
// computed at now, the per-quarter and monthly series, benefits, costs,
// stakeholders, projects and the calculation appendix (Document). ok is
// false when the case is gone.
func (s Store) Snapshot(ctx context.Context, tenantID, caseID uuid.UUID, now time.Time) (c *render.Case, ok bool, err error) {
	err = db.InTenant(ctx, s.Pool, tenantID, func(tx pgx.Tx) error {
		row, err := db.Q.BusinessCaseGet(ctx, tx, dbsqlc.BusinessCaseGetParams{TenantID: tenantID, ID: caseID})
		if db.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if c, ok, err = frozenDocument(ctx, tx, tenantID, caseID); err != nil || ok {
			return err
		}
		in, err := db.Q.InitiativeGet(ctx, tx, dbsqlc.InitiativeGetParams{TenantID: tenantID, ID: row.InitiativeID})
		if err != nil {
			return err
		}
		rows, err := initiativevalue.Load(ctx, tx, tenantID, row.InitiativeID, now)
		if err != nil {
			return err
		}
		snap, _, err := businesscase.Figures(rows, now, initiative.Status(in.Status) == initiative.Archived)
		if err != nil {
			return err
		}
		if row.Snapshot != nil { // approved before documents were frozen: at least the frozen figures
			if snap, err = businesscase.ReadSnapshot(row.Snapshot); err != nil {
				return fmt.Errorf("decode frozen figures: %w", err)
			}
		}
		projects, err := db.Q.ProjectListByInitiative(ctx, tx, dbsqlc.ProjectListByInitiativeParams{TenantID: tenantID, InitiativeID: row.InitiativeID})
		if err != nil {
			return err
		}
		ok = true
		c, err = Build(row, in, rows, projects, snap)
		return err
	})
	return c, ok, err
}

// benefitRows are the money benefits (unit currency, not cancelled: what the
// figures add up) compared like for like to date in the base currency, as
// the initiative detail compares them (finance.Benefit.CompareToDate), each
// amount rounded once to the base currency's minor units; total is the
// table's total from the exact sums (the detail's figures), nil when a rate
// is missing. Amounts in other units or currencies never enter the table's
// base-currency columns raw; a benefit whose rates are missing is left out
// (the snapshot lists the missing rates).
func benefitRows(rows valuation.Rows, fx finance.FX, current finance.Month) (out []render.Benefit, total *render.Benefit) {
	base := rows.Settings.BaseCurrency
	var all finance.Comparison
	complete := true
	rows.EachMoneyBenefit(func(b dbsqlc.Benefit, fb finance.Benefit) {
		c, missing := fb.CompareToDate(current, fx)
		if len(missing) > 0 {
			complete = false
			return
		}
		all.Merge(c)
		out = append(out, comparisonRow(b.Name, b.Category, c, base))
	})
	if complete {
		total = new(comparisonRow("Total", "", all, base))
	}
	return out, total
}

// comparisonRow is a benefits table row of c, rounded for the document.
func comparisonRow(name, category string, c finance.Comparison, base string) render.Benefit {
	row := render.Benefit{Name: name, Category: category, Expected: money.Amount(c.Expected, base), Unmeasured: money.Amount(c.Unmeasured, base)}
	if c.Measured > 0 {
		row.Actual, row.Variance = new(money.Amount(c.Actual, base)), new(money.Amount(c.Variance(), base))
		if p := c.VariancePercent(); p != nil {
			row.VariancePercent = new(money.PercentOf(*p))
		}
	}
	return row
}

// costRows are the cost lines, each the total of its charges over the
// snapshot's horizon in the base currency, so the column adds up to the
// figures' total cost. A line whose rates are missing is left out.
func costRows(rows valuation.Rows, fx finance.FX, snap businesscase.Snapshot) []render.Cost {
	if snap.HorizonStart == nil || snap.HorizonEnd == nil {
		return nil
	}
	start, errS := finance.ParseMonth(*snap.HorizonStart)
	end, errE := finance.ParseMonth(*snap.HorizonEnd)
	if errS != nil || errE != nil {
		return nil
	}
	costs := valuation.Costs(rows)
	var out []render.Cost
	for i, x := range rows.Costs {
		cf, missing := finance.BuildCashFlows(finance.Horizon{Start: start, End: end}, nil, costs[i:i+1], finance.BasisExpected, fx)
		if len(missing) > 0 {
			continue
		}
		out = append(out, render.Cost{Name: x.Name, Category: x.Category, Timing: x.Recurrence, Amount: money.Amount(cf.TotalCosts(), rows.Settings.BaseCurrency)})
	}
	return out
}
