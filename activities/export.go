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
// the snapshot and the blob store live in internal/export, the document in
// internal/render.
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
	t, err := uuid.Parse(r.TenantID)
	if err != nil {
		return export.Job{}, temporal.NewNonRetryableApplicationError("bad tenant id", "BadInput", err)
	}
	id, err := uuid.Parse(r.ExportID)
	if err != nil {
		return export.Job{}, temporal.NewNonRetryableApplicationError("bad export id", "BadInput", err)
	}
	return export.Job{TenantID: t, ID: id}, nil
}

// ExportSnapshot is what the render needs: the export's choices and the case.
type ExportSnapshot struct {
	Found             bool // false: the export or its case is gone, or it already finished
	Format            render.Format
	IncludeAppendices bool
	Watermark         string
	Author            string
	Case              *render.Case
}

// ExportTakeSnapshot marks the export running and reads the case in one tenant transaction.
func (a *ExportActivities) ExportTakeSnapshot(ctx context.Context, ref ExportRef) (ExportSnapshot, error) {
	j, err := ref.job()
	if err != nil {
		return ExportSnapshot{}, err
	}
	spec, ok, err := a.Store.Start(ctx, j)
	if err != nil || !ok {
		return ExportSnapshot{}, err
	}
	c, ok, err := a.Store.Snapshot(ctx, j.TenantID, spec.CaseID, time.Now())
	if err != nil || !ok {
		return ExportSnapshot{}, err
	}
	return ExportSnapshot{Found: true, Format: spec.Format, IncludeAppendices: spec.IncludeAppendices, Watermark: spec.Watermark, Author: spec.RequestedBy, Case: c}, nil
}

// ExportRender writes the document, heartbeating (and recording) its
// progress, and stores the file: content, size, sha256, succeeded. A render
// that rejects its input fails for good (retrying cannot help).
func (a *ExportActivities) ExportRender(ctx context.Context, ref ExportRef, snap ExportSnapshot) (int, error) {
	j, err := ref.job()
	if err != nil {
		return 0, err
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
	opts := render.Options{IncludeAppendices: snap.IncludeAppendices, Watermark: snap.Watermark, Author: snap.Author, Progress: progress}
	if err := render.Render(ctx, &buf, snap.Format, snap.Case, opts); err != nil {
		if errors.Is(err, render.ErrInvalid) {
			return 0, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidCase", err)
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
