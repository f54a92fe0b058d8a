package workflows

import (
	"os"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/valuecase/valuecase/activities"
)

// historyThatCarriedTheCase is a PDF export recorded on the dev server with
// the code that passed the whole render.Case from the snapshot activity to
// the render (the case is in the snapshot's result and the render's input).
const historyThatCarriedTheCase = "testdata/export_history_that_carried_the_case.json"

// Runs started before the render read the case by id replay on this code
// without a nondeterminism error, whole and cut where a deploy may find them:
// no version marker is needed.
func TestExportWorkflowReplaysRunsThatCarriedTheCase(t *testing.T) {
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflow(BusinessCaseExportWorkflow)
	if err := replayer.ReplayWorkflowHistoryFromJSONFile(nil, historyThatCarriedTheCase); err != nil {
		t.Fatalf("the whole run: %v", err)
	}
	// Cut after the snapshot was scheduled, after the render was (a deploy
	// there leaves the old render to this code's worker) and after it finished.
	for _, last := range []int64{5, 11, 13} {
		if err := replayer.ReplayPartialWorkflowHistoryFromJSONFile(nil, historyThatCarriedTheCase, last); err != nil {
			t.Errorf("the run up to event %d: %v", last, err)
		}
	}
}

// The render this code's worker is handed by such a run decodes: the
// snapshot's case is ignored, and with no moment recorded the render uses its
// own now.
func TestExportRenderTakesTheInputOfRunsThatCarriedTheCase(t *testing.T) {
	f, err := os.Open(historyThatCarriedTheCase)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	history, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range history.GetEvents() {
		scheduled := ev.GetActivityTaskScheduledEventAttributes()
		if scheduled.GetActivityType().GetName() != "ExportRender" {
			continue
		}
		if n := len(scheduled.GetInput().GetPayloads()[1].GetData()); n < 1000 {
			t.Fatalf("the recorded render input is %d bytes: not the one that carried the case", n)
		}
		var ref activities.ExportRef
		var snap activities.ExportSnapshot
		if err := converter.GetDefaultDataConverter().FromPayloads(scheduled.GetInput(), &ref, &snap); err != nil {
			t.Fatal(err)
		}
		if ref.TenantID == "" || ref.ExportID == "" || !snap.Found || !snap.AsOf.IsZero() {
			t.Fatalf("decoded %+v %+v", ref, snap)
		}
		return
	}
	t.Fatal("no render in the recorded history")
}
