package workflows_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/workflows"
)

// A cluster without the search attributes (TenantId, ObjectType, ObjectId) gets them from
// the worker's start, and a second call leaves them as they are.
func TestEnsureSearchAttributesRegistersTenantID(t *testing.T) {
	c := testenv.TemporalClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := "sa-" + time.Now().Format("150405.000000")
	if _, err := c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	has := func() bool {
		res, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"TenantId", "ObjectType", "ObjectId"} {
			if _, ok := res.GetCustomAttributes()[name]; !ok {
				return false
			}
		}
		return true
	}
	if has() {
		t.Fatal("a new namespace already has the attributes: the test proves nothing")
	}
	for range 2 {
		if err := workflows.EnsureSearchAttributes(ctx, c, ns); err != nil {
			t.Fatal(err)
		}
		if !has() {
			t.Fatal("the search attributes are not registered")
		}
	}
}
