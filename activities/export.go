package activities

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/valuecase/valuecase/internal/export"
	"github.com/valuecase/valuecase/internal/render"
)

// ExportActivities are the activities of the business-case export workflow;
// the case's snapshot and the blob store live in internal/export, the
// document in internal/render.
type ExportActivities struct {
	Store     export.Store
	Blobs     export.BlobStore // where the file goes; nil: Store
	Retention time.Duration    // how long a file is served; 0: export.DefaultRetention
}

// ExportRef names one export.
type ExportRef struct {
	TenantID string
	ExportID string
}

func (r ExportRef) job() (export.Job, error) {
	tenantID, err := uuid.Parse(r.TenantID)
	if err != nil {
		return export.Job{}, temporal.NewNonRetryableApplicationError("bad tenant id", "BadInput", err)
	}
	id, err := uuid.Parse(r.ExportID)
	if err != nil {
		return export.Job{}, temporal.NewNonRetryableApplicationError("bad export id", "BadInput", err)
	}
	return export.Job{TenantID: tenantID, ID: id}, nil
}

// ExportSnapshot is what ExportTakeSnapshot hands the workflow: whether
// there is anything to render and the moment its figures are computed at.
// It never carries the case: ExportRender reads it by the export's ids, so
// the workflow's history stays small whatever the case holds (Temporal
// limits a payload to 2 MB; a case's text alone can be most of that).
type ExportSnapshot struct {
	Found bool      // false: the export is gone, or it already finished
	AsOf  time.Time // zero (a run started before AsOf existed): the render's own now
}

// ExportFailure is why an export activity gives up for good: Go error types
// do not cross the Temporal boundary, so it travels as the details of the
// activity's non-retryable ApplicationError (exportFailureOf reads it back).
type ExportFailure struct {
	Kind   string // ExportInvalidCase, ExportNothingToRender
	Reason string // for a person: stored as the export's error
}

// Kinds of ExportFailure.
const (
	ExportInvalidCase     = "InvalidCase"     // the render refused the case
	ExportNothingToRender = "NothingToRender" // the export finished, or its case was deleted, meanwhile
)

func (f ExportFailure) err(cause error) error {
	return temporal.NewNonRetryableApplicationError(f.Reason, f.Kind, cause, f)
}

// ExportFailureOf reads the ExportFailure an activity failed with; false for
// any other failure (a timeout, a cancel, an internal error).
func ExportFailureOf(err error) (ExportFailure, bool) {
	app, ok := errors.AsType[*temporal.ApplicationError](err)
	if !ok || !app.HasDetails() {
		return ExportFailure{}, false
	}
	var f ExportFailure
	if app.Details(&f) != nil || f.Reason == "" {
		return ExportFailure{}, false
	}
	return f, true
}

// ExportTakeSnapshot marks the export running and fixes the moment its
// figures are computed at, so a retried render shows the same figures.
func (a *ExportActivities) ExportTakeSnapshot(ctx context.Context, ref ExportRef) (ExportSnapshot, error) {
	j, err := ref.job()
	if err != nil {
		return ExportSnapshot{}, err
	}
	ok, err := a.Store.Start(ctx, j)
	if err != nil || !ok {
		return ExportSnapshot{}, err
	}
	return ExportSnapshot{Found: true, AsOf: time.Now().UTC()}, nil
}

// ExportRender reads the export's choices and its case (at snap.AsOf) by
// their ids, writes the document, heartbeating (and recording) its
// progress, and stores the file: content, size, sha256, succeeded. A render
// that rejects its input fails for good (retrying cannot help).
func (a *ExportActivities) ExportRender(ctx context.Context, ref ExportRef, snap ExportSnapshot) (int, error) {
	j, err := ref.job()
	if err != nil {
		return 0, err
	}
	spec, ok, err := a.Store.Spec(ctx, j)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ExportFailure{Kind: ExportNothingToRender, Reason: "the export finished before its document was rendered"}.err(nil)
	}
	asOf := snap.AsOf
	if asOf.IsZero() {
		asOf = time.Now()
	}
	c, ok, err := a.Store.Snapshot(ctx, j.TenantID, spec.CaseID, asOf)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ExportFailure{Kind: ExportNothingToRender, Reason: "the business case was deleted"}.err(nil)
	}
	last := 0
	progress := func(pct int) {
		activity.RecordHeartbeat(ctx, pct)
		if pct-last >= 10 || pct == 100 {
			last = pct
			_ = a.Store.Progress(ctx, j, pct) // best effort: the file is what counts
		}
	}
	var buf bytes.Buffer
	opts := render.Options{IncludeAppendices: spec.IncludeAppendices, Watermark: spec.Watermark, Author: spec.RequestedBy, Progress: progress}
	if err := render.Render(ctx, &buf, spec.Format, c, opts); err != nil {
		if invalid, ok := errors.AsType[*render.InvalidInputError](err); ok {
			return 0, ExportFailure{Kind: ExportInvalidCase, Reason: invalid.Reason}.err(err)
		}
		return 0, err
	}
	blobs := a.Blobs
	if blobs == nil {
		blobs = a.Store
	}
	retention := a.Retention
	if retention <= 0 {
		retention = export.DefaultRetention
	}
	if _, err := blobs.Put(ctx, j, buf.Bytes(), retention); err != nil {
		return 0, err
	}
	return buf.Len(), nil
}

// ExportFail marks the export failed with a reason a person understands.
func (a *ExportActivities) ExportFail(ctx context.Context, ref ExportRef, reason string) error {
	j, err := ref.job()
	if err != nil {
		return err
	}
	return a.Store.Fail(ctx, j, reason)
}

// ExportCancel marks the export canceled (its run was canceled, from REST or the Temporal UI);
// an export that finished keeps its outcome.
func (a *ExportActivities) ExportCancel(ctx context.Context, ref ExportRef, reason string) error {
	j, err := ref.job()
	if err != nil {
		return err
	}
	return a.Store.Cancel(ctx, j, reason)
}
