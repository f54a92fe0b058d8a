package worker

import (
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/valuecase/valuecase/internal/runs"
	"github.com/valuecase/valuecase/internal/webhook/dispatch"
)

// Every workflow the worker registers has a kind in the workflow view (GET
// /api/v1/agents/workflows lists runs by workflow type), and every type the view knows is
// registered: a new workflow without a kind would never be listed.
func TestEveryRegisteredWorkflowHasAKind(t *testing.T) {
	var registered []string
	for _, r := range (&Worker{Webhooks: &dispatch.Dispatcher{}}).registrations() {
		for _, wf := range r.workflows {
			name := runtime.FuncForPC(reflect.ValueOf(wf).Pointer()).Name()
			name = name[strings.LastIndex(name, ".")+1:]
			registered = append(registered, name)
			if runs.KindOf(name) == "" {
				t.Errorf("workflow %s has no kind in internal/runs", name)
			}
		}
	}
	for _, typ := range runs.WorkflowTypes() {
		if !slices.Contains(registered, typ) {
			t.Errorf("internal/runs names workflow type %s, which the worker does not register", typ)
		}
	}
}
