package runs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/valuecase/valuecase/internal/rbac"
)

var tenant = uuid.MustParse("0b7c6f8e-8d1f-4c44-9b7a-1a2b3c4d5e6f")

func TestQuery(t *testing.T) {
	after := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	all := Readable(func(rbac.Permission) bool { return true })
	tests := []struct {
		name    string
		allowed []Kind
		f       Filter
		want    string
		err     string
	}{
		{"every readable kind", []Kind{KindExport, KindInitiativeReview}, Filter{},
			`TenantId = '` + tenant.String() + `' AND WorkflowType IN ('BusinessCaseExportWorkflow', 'InitiativeReviewWorkflow')`, ""},
		{"a sync covers the scheduled parent", all, Filter{Kinds: []Kind{KindIntegrationSync}, Statuses: []Status{Running, TimedOut}},
			`TenantId = '` + tenant.String() + `' AND WorkflowType IN ('IntegrationSyncWorkflow', 'IntegrationScheduledSyncWorkflow') AND ExecutionStatus IN ('Running', 'TimedOut')`, ""},
		{"object and time", all, Filter{Kinds: []Kind{KindExport}, ObjectType: ObjectBusinessCase, ObjectID: "x", StartedAfter: &after, StartedBefore: &after},
			`TenantId = '` + tenant.String() + `' AND WorkflowType IN ('BusinessCaseExportWorkflow') AND ObjectType = 'business_case' AND ObjectId = 'x' AND StartTime >= '2026-01-02T03:04:05Z' AND StartTime < '2026-01-02T03:04:05Z'`, ""},
		{"quotes are escaped", all, Filter{Kinds: []Kind{KindExport}, ObjectID: `a' OR TenantId != '`},
			`TenantId = '` + tenant.String() + `' AND WorkflowType IN ('BusinessCaseExportWorkflow') AND ObjectId = 'a\' OR TenantId != \''`, ""},
		{"a kind the caller may not read", []Kind{KindExport}, Filter{Kinds: []Kind{KindIntegrationSync}}, "", "need permission admin:config"},
		{"an unknown kind", all, Filter{Kinds: []Kind{"everything"}}, "", "unknown kind"},
		{"an unknown status", all, Filter{Statuses: []Status{"stuck"}}, "", "unknown status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Query(tenant, tt.allowed, tt.f)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("want error %q, got %v (%s)", tt.err, err, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %s (%v)\nwant %s", got, err, tt.want)
			}
		})
	}
}

func TestReadableFollowsPermissions(t *testing.T) {
	got := Readable(func(p rbac.Permission) bool { return p == rbac.WebhooksManage })
	if len(got) != 2 || got[0] != KindWebhookRetries || got[1] != KindWebhookRedelivery {
		t.Fatalf("webhooks:manage reads %v", got)
	}
	if got := Readable(func(rbac.Permission) bool { return false }); len(got) != 0 {
		t.Fatalf("no permission reads %v", got)
	}
	if CancelPermission(KindBusinessCaseApproval) != "" || CancelPermission(KindExport) != rbac.BusinessCasesRead {
		t.Fatal("only exports and syncs are cancelable")
	}
}

func TestCursorIsBoundToItsQuery(t *testing.T) {
	c := EncodeCursor("q1", []byte{1, 2, 3})
	if tok, err := DecodeCursor("q1", c); err != nil || string(tok) != "\x01\x02\x03" {
		t.Fatalf("round trip: %v %v", tok, err)
	}
	for _, bad := range []string{c + "x", "not base64!", "e30", strings.Repeat("A", MaxCursorLen+1)} {
		if _, err := DecodeCursor("q1", bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := DecodeCursor("q2", c); !errors.Is(err, ErrBadCursor) {
		t.Error("a cursor continues another query")
	}
	if EncodeCursor("q1", nil) != "" {
		t.Error("the last page has a cursor")
	}
}

func ev(id int64, at time.Time, typ enums.EventType, set func(*historypb.HistoryEvent)) *historypb.HistoryEvent {
	e := &historypb.HistoryEvent{EventId: id, EventTime: timestamppb.New(at), EventType: typ}
	set(e)
	return e
}

// A webhook retry run waiting on its timer, and an export whose render keeps failing: the
// steps say so in words, with the attempts and the next attempt's time from the pending
// activity, and internal error text never shows.
func TestStepsInWords(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	timer := []*historypb.HistoryEvent{
		ev(5, t0, enums.EVENT_TYPE_TIMER_STARTED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_TimerStartedEventAttributes{TimerStartedEventAttributes: &historypb.TimerStartedEventAttributes{
				TimerId: "5", StartToFireTimeout: durationpb.New(5 * time.Minute)}}
		}),
	}
	got, _ := steps(KindWebhookRetries, timer, nil, now)
	if len(got) != 1 || got[0].Status != StepWaiting || got[0].FiresAt == nil || !got[0].FiresAt.Equal(t0.Add(5*time.Minute)) ||
		got[0].Description != "Waits for the next delivery attempt, due at 2026-03-01T10:05:00Z (in 4m0s)." {
		t.Fatalf("timer: %+v", got)
	}

	// A webhook retry run started with a delay until attempt 2: no timer in its history, the
	// same step in words; once the delay is over, a fired timer before the attempt.
	delayed := []*historypb.HistoryEvent{
		ev(1, t0, enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
				FirstWorkflowTaskBackoff: durationpb.New(5 * time.Minute)}}
		}),
	}
	got, _ = steps(KindWebhookRetries, delayed, nil, now)
	if len(got) != 1 || got[0].Type != StepTimer || got[0].Status != StepWaiting ||
		got[0].Description != "Waits for the next delivery attempt, due at 2026-03-01T10:05:00Z (in 4m0s)." {
		t.Fatalf("delayed start: %+v", got)
	}
	delayed = append(delayed,
		ev(2, t0.Add(5*time.Minute), enums.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, func(*historypb.HistoryEvent) {}),
		ev(5, t0.Add(5*time.Minute), enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
				ActivityId: "5", ActivityType: &commonpb.ActivityType{Name: "WebhookAttempt"}}}
		}))
	got, _ = steps(KindWebhookRetries, delayed, nil, t0.Add(6*time.Minute))
	if len(got) != 2 || got[0].Status != StepFired || got[0].Description != "Waited for the next delivery attempt until 2026-03-01T10:05:00Z." ||
		got[1].Description != "Attempt a delivery to the webhook: waiting for a worker." {
		t.Fatalf("delayed start, over: %+v", got)
	}

	render := []*historypb.HistoryEvent{
		ev(5, t0, enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
				ActivityId: "5", ActivityType: &commonpb.ActivityType{Name: "ExportRender"}}}
		}),
	}
	next := now.Add(2 * time.Second)
	pending := []*workflowpb.PendingActivityInfo{{
		ActivityId: "5", State: enums.PENDING_ACTIVITY_STATE_SCHEDULED, Attempt: 3, NextAttemptScheduleTime: timestamppb.New(next),
		LastFailure: &failurepb.Failure{Message: "dial tcp 10.0.0.5:5432: connection refused (password=hunter2)",
			FailureInfo: &failurepb.Failure_ApplicationFailureInfo{ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{Type: "*net.OpError"}}},
	}}
	got, runFailure := steps(KindExport, render, pending, now)
	if len(got) != 1 || got[0].Status != StepRetrying || got[0].Attempts != 3 || got[0].NextAttemptAt == nil {
		t.Fatalf("retrying render: %+v", got)
	}
	want := "Render and store the document: attempt 2 failed, next attempt at 2026-03-01T10:01:02Z (an internal error (operators see the details in the Temporal UI))."
	if got[0].Description != want || strings.Contains(runFailure, "hunter2") || runFailure == "" {
		t.Fatalf("description %q, run failure %q", got[0].Description, runFailure)
	}

	// A provider's refusal is written for the client and shows as it is.
	f := &failurepb.Failure{Message: "activity error", FailureInfo: &failurepb.Failure_ActivityFailureInfo{ActivityFailureInfo: &failurepb.ActivityFailureInfo{}},
		Cause: &failurepb.Failure{Message: "the provider refused the token: 401", FailureInfo: &failurepb.Failure_ApplicationFailureInfo{
			ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{Type: "ProviderUnauthorized"}}}}
	if got := failureText(f); got != "the provider refused the token: 401" {
		t.Fatalf("provider failure: %q", got)
	}
}

// The memo of closed runs' failure texts keeps at most its size, forgetting the oldest first,
// and keeps the first text of a run (a closed run's close event does not change).
func TestFailureMemoBounded(t *testing.T) {
	m := newFailureMemo(2)
	m.put("a", "first")
	m.put("a", "second")
	m.put("b", "")
	if text, ok := m.get("a"); !ok || text != "first" {
		t.Errorf("a = %q, %v", text, ok)
	}
	if text, ok := m.get("b"); !ok || text != "" {
		t.Errorf("b = %q, %v (a run closed without a failure text is remembered too)", text, ok)
	}
	m.put("c", "third")
	if _, ok := m.get("a"); ok {
		t.Error("the oldest entry stayed past the size")
	}
	if text, ok := m.get("c"); !ok || text != "third" || len(m.texts) != 2 {
		t.Errorf("c = %q, %v; %d entries", text, ok, len(m.texts))
	}
}
