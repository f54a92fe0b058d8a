package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/valuecase/valuecase/activities"
)

func newExportEnv(t *testing.T, renderFn any) (*testsuite.TestWorkflowEnvironment, *[]string) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.ExportActivities
	env.RegisterActivity(a)
	var failed []string
	env.OnActivity(a.ExportTakeSnapshot, mock.Anything, mock.Anything).Return(activities.ExportSnapshot{Found: true, AsOf: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}, nil)
	env.OnActivity(a.ExportRender, mock.Anything, mock.Anything, mock.Anything).Return(renderFn)
	env.OnActivity(a.ExportFail, mock.Anything, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.ExportRef, reason string) error {
		failed = append(failed, reason)
		return nil
	})
	return env, &failed
}

// TestExportWorkflowSucceeds: snapshot then render+store; no failure recorded.
func TestExportWorkflowSucceeds(t *testing.T) {
	env, failed := newExportEnv(t, func(context.Context, activities.ExportRef, activities.ExportSnapshot) (int, error) { return 1234, nil })
	env.ExecuteWorkflow(BusinessCaseExportWorkflow, BusinessCaseExportInput{TenantID: "t", CaseID: "c", ExportID: "e"})
	var res BusinessCaseExportResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != "succeeded" || res.Size != 1234 || len(*failed) != 0 {
		t.Fatalf("result %+v, failed %v", res, *failed)
	}
}

// TestExportWorkflowPastDeadlineFails: a render slower than the deadline is
// stopped and the export marked failed with a clear reason, never left running.
func TestExportWorkflowPastDeadlineFails(t *testing.T) {
	env, failed := newExportEnv(t, func(ctx context.Context, _ activities.ExportRef, _ activities.ExportSnapshot) (int, error) {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Second):
			return 1, nil
		}
	})
	env.ExecuteWorkflow(BusinessCaseExportWorkflow, BusinessCaseExportInput{TenantID: "t", CaseID: "c", ExportID: "e", Deadline: time.Second})
	var res BusinessCaseExportResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != "failed" || len(*failed) != 1 || !strings.Contains((*failed)[0], "took longer than 1s") {
		t.Fatalf("result %+v, failed %v", res, *failed)
	}
}

// TestExportWorkflowInvalidCaseFails: a case the render refuses fails the
// export for good with the render's reason, worded for a person.
func TestExportWorkflowInvalidCaseFails(t *testing.T) {
	refused := activities.ExportFailure{Kind: activities.ExportInvalidCase, Reason: `unknown template "memo"`}
	env, failed := newExportEnv(t, func(context.Context, activities.ExportRef, activities.ExportSnapshot) (int, error) {
		return 0, temporal.NewNonRetryableApplicationError(refused.Reason, refused.Kind, nil, refused)
	})
	env.ExecuteWorkflow(BusinessCaseExportWorkflow, BusinessCaseExportInput{TenantID: "t", CaseID: "c", ExportID: "e"})
	var res BusinessCaseExportResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	want := `the document could not be rendered: unknown template "memo"`
	if res.Status != "failed" || len(*failed) != 1 || (*failed)[0] != want {
		t.Fatalf("result %+v, failed %v; want %q", res, *failed, want)
	}
}

// TestExportWorkflowPassesNoCase: the render receives the snapshot's moment
// and the export's ids, never the case (it reads the case itself), so the
// history stays small whatever the case holds.
func TestExportWorkflowPassesNoCase(t *testing.T) {
	var got activities.ExportSnapshot
	var gotRef activities.ExportRef
	env, _ := newExportEnv(t, func(_ context.Context, ref activities.ExportRef, snap activities.ExportSnapshot) (int, error) {
		gotRef, got = ref, snap
		return 1, nil
	})
	env.ExecuteWorkflow(BusinessCaseExportWorkflow, BusinessCaseExportInput{TenantID: "t", CaseID: "c", ExportID: "e"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if gotRef != (activities.ExportRef{TenantID: "t", ExportID: "e"}) || !got.Found || !got.AsOf.Equal(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("render got %+v %+v", gotRef, got)
	}
}
