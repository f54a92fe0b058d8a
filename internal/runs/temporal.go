package runs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// DefaultDeadline is how long a request waits on Temporal before it answers
// 503: visibility on a healthy cluster answers in milliseconds.
const DefaultDeadline = 3 * time.Second

// Errors of the reader.
var (
	// ErrUnavailable: Temporal did not answer within the deadline, is down, or refused the
	// call for its rate limits.
	ErrUnavailable = errors.New("runs: Temporal did not answer in time")
	// ErrNotFound: no run of that id belongs to the tenant (or it is not one of ours).
	ErrNotFound = errors.New("runs: no such run")
)

// Run is one run as the list and the detail show it.
type Run struct {
	ID           string
	RunID        string
	Kind         Kind
	WorkflowType string
	Status       Status
	TaskQueue    string
	StartedAt    time.Time
	ClosedAt     *time.Time
	Subject      Subject
	// LastFailure is why the run failed or timed out, in words (the list
	// fills it for closed runs; the detail also for running ones whose
	// current step keeps failing).
	LastFailure string
}

// Page is one page of a list and the cursor of the next ("" at the end).
type Page struct {
	Runs []Run
	Next string
}

// Reader reads a tenant's runs from Temporal.
type Reader struct {
	Temporal  client.Client
	Namespace string
	Deadline  time.Duration // 0: DefaultDeadline
}

func (r Reader) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	d := r.Deadline
	if d <= 0 {
		d = DefaultDeadline
	}
	return context.WithTimeout(ctx, d)
}

// unavailable maps the failures of a call that did not get an answer.
func unavailable(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	_, down := errors.AsType[*serviceerror.Unavailable](err)
	_, late := errors.AsType[*serviceerror.DeadlineExceeded](err)
	_, busy := errors.AsType[*serviceerror.ResourceExhausted](err) // the namespace's visibility rate limit, say
	if down || late || busy || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return errors.Join(ErrUnavailable, err)
	}
	return err
}

// List reads one page of the tenant's runs that f selects among the kinds
// allowed. size is the page size (1-100); cursor continues an earlier page.
func (r Reader) List(ctx context.Context, tenantID uuid.UUID, allowed []Kind, f Filter, size int, cursor string) (Page, error) {
	query, err := Query(tenantID, allowed, f)
	if err != nil {
		return Page{}, err
	}
	token, err := DecodeCursor(query, cursor)
	if err != nil {
		return Page{}, err
	}
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	res, err := r.Temporal.WorkflowService().ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: r.Namespace, PageSize: int32(size), NextPageToken: token, Query: query,
	})
	if _, bad := errors.AsType[*serviceerror.InvalidArgument](err); bad && token != nil {
		return Page{}, ErrBadCursor
	}
	if err := unavailable(ctx, err); err != nil {
		return Page{}, err
	}
	page := Page{Next: EncodeCursor(query, res.GetNextPageToken())}
	for _, info := range res.GetExecutions() {
		run, ok := toRun(info, tenantID)
		if ok {
			page.Runs = append(page.Runs, run)
		}
	}
	if err := r.closeFailures(ctx, page.Runs); err != nil {
		return Page{}, err
	}
	return page, nil
}

// maxParallelReads bounds the history reads of one list request.
const maxParallelReads = 8

// closedFailureTexts remembers why closed runs ended, by run: a closed run's close event
// never changes, so a text read once is the text for good (the list itself always comes
// fresh from visibility). Without it every list request read the close event of each failed
// run on its page (30 history reads for a page of 50 with 30 terminated runs).
var closedFailureTexts = newFailureMemo(8192)

// failureMemo is a bounded map of run -> failure text; the oldest entry goes first.
type failureMemo struct {
	mu    sync.Mutex
	texts map[string]string
	order []string // keys, oldest first (a ring of len max)
	next  int
	max   int
}

func newFailureMemo(size int) *failureMemo {
	return &failureMemo{texts: make(map[string]string, size), max: size}
}

func (m *failureMemo) get(key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	text, ok := m.texts[key]
	return text, ok
}

func (m *failureMemo) put(key, text string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.texts[key]; ok {
		return
	}
	if len(m.order) < m.max {
		m.order = append(m.order, key)
	} else {
		delete(m.texts, m.order[m.next])
		m.order[m.next] = key
		m.next = (m.next + 1) % m.max
	}
	m.texts[key] = text
}

// closeFailures fills LastFailure of the failed, timed-out and terminated runs of a page
// from their close event (one small history read each, in parallel, for the runs not read
// before).
func (r Reader) closeFailures(ctx context.Context, list []Run) error {
	var wg sync.WaitGroup
	errs := make([]error, len(list))
	slots := make(chan struct{}, maxParallelReads) // a page of failures must not flood the frontend
	for i := range list {
		if list[i].Status != Failed && list[i].Status != TimedOut && list[i].Status != Terminated {
			continue
		}
		key := r.Namespace + "/" + list[i].ID + "/" + list[i].RunID
		if text, ok := closedFailureTexts.get(key); ok {
			list[i].LastFailure = text
			continue
		}
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			res, err := r.Temporal.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
				Namespace: r.Namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: list[i].ID, RunId: list[i].RunID},
				HistoryEventFilterType: enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
			})
			if err != nil {
				errs[i] = unavailable(ctx, err)
				return
			}
			for _, ev := range res.GetHistory().GetEvents() {
				if text := closeFailure(ev); text != "" {
					list[i].LastFailure = text
				}
			}
			if len(res.GetHistory().GetEvents()) > 0 { // the close event was there: final
				closedFailureTexts.put(key, list[i].LastFailure)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// closeFailure is why a run ended badly, from its close event.
func closeFailure(ev *historypb.HistoryEvent) string {
	switch ev.GetEventType() {
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
		return failureText(ev.GetWorkflowExecutionFailedEventAttributes().GetFailure())
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
		return "the run exceeded its time limit and was stopped"
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
		reason := ev.GetWorkflowExecutionTerminatedEventAttributes().GetReason()
		if reason == "" {
			return "an operator terminated the run"
		}
		return "an operator terminated the run: " + truncate(reason, maxFailureLen)
	}
	return ""
}

// toRun maps a visibility or describe record; ok is false for a run that is
// not the tenant's by its TenantId search attribute, or not one of ours.
func toRun(info *workflowpb.WorkflowExecutionInfo, tenantID uuid.UUID) (Run, bool) {
	sa := info.GetSearchAttributes().GetIndexedFields()
	if keyword(sa[TenantIDAttribute]) != tenantID.String() {
		return Run{}, false
	}
	kind := KindOf(info.GetType().GetName())
	if kind == "" {
		return Run{}, false
	}
	run := Run{
		ID: info.GetExecution().GetWorkflowId(), RunID: info.GetExecution().GetRunId(), Kind: kind, WorkflowType: info.GetType().GetName(),
		Status: statusOf(info.GetStatus()), TaskQueue: info.GetTaskQueue(), StartedAt: info.GetStartTime().AsTime(),
		Subject: Subject{Object: Object{Type: ObjectType(keyword(sa[ObjectTypeAttribute])), ID: keyword(sa[ObjectIDAttribute])}},
	}
	if ct := info.GetCloseTime(); ct != nil && info.GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t := ct.AsTime()
		run.ClosedAt = &t
	}
	memo := info.GetMemo().GetFields()
	run.Subject.Summary = keyword(memo[memoSummary])
	run.Subject.ResourceType = ResourceType(keyword(memo[memoResourceType]))
	run.Subject.ResourceID = keyword(memo[memoResourceID])
	return run, true
}

// keyword decodes a string payload ("" when absent or not a string).
func keyword(p *commonpb.Payload) string {
	if p == nil {
		return ""
	}
	var s string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
		return ""
	}
	return s
}

func statusOf(s enums.WorkflowExecutionStatus) Status {
	switch s {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return Running
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return Completed
	case enums.WORKFLOW_EXECUTION_STATUS_FAILED:
		return Failed
	case enums.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return Canceled
	case enums.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return Terminated
	case enums.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return TimedOut
	case enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return ContinuedAsNew
	}
	return Status("unknown")
}

// Detail is one run with its steps.
type Detail struct {
	Run
	Steps []Step
	// StepsTruncated: the history was longer than maxHistoryEvents; Steps holds its beginning.
	StepsTruncated bool
}

// maxHistoryEvents bounds the history read for one detail (our runs have
// tens of events; a run that grew past this is shown in part).
const maxHistoryEvents = 2000

// describe reads the latest run of workflow id id, if it is the tenant's.
func (r Reader) describe(ctx context.Context, tenantID uuid.UUID, id string) (Run, *workflowservice.DescribeWorkflowExecutionResponse, error) {
	desc, err := r.Temporal.WorkflowService().DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
		Namespace: r.Namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: id},
	})
	if _, nf := errors.AsType[*serviceerror.NotFound](err); nf {
		return Run{}, nil, ErrNotFound
	}
	if _, bad := errors.AsType[*serviceerror.InvalidArgument](err); bad {
		return Run{}, nil, ErrNotFound
	}
	if err := unavailable(ctx, err); err != nil {
		return Run{}, nil, err
	}
	run, ok := toRun(desc.GetWorkflowExecutionInfo(), tenantID)
	if !ok {
		return Run{}, nil, ErrNotFound // another tenant's run answers exactly as a missing one
	}
	return run, desc, nil
}

// Run reads the latest run of workflow id id, if it is the tenant's, without its steps
// (what a cancel needs).
func (r Reader) Run(ctx context.Context, tenantID uuid.UUID, id string) (Run, error) {
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	run, _, err := r.describe(ctx, tenantID, id)
	return run, err
}

// Get reads the latest run of workflow id id, if it is the tenant's, with
// its steps from the run's history and pending activities.
func (r Reader) Get(ctx context.Context, tenantID uuid.UUID, id string) (Detail, error) {
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	run, desc, err := r.describe(ctx, tenantID, id)
	if err != nil {
		return Detail{}, err
	}
	d := Detail{Run: run}
	var events []*historypb.HistoryEvent
	var token []byte
	for {
		res, err := r.Temporal.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace: r.Namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: run.ID, RunId: run.RunID},
			MaximumPageSize: 500, NextPageToken: token,
		})
		if err := unavailable(ctx, err); err != nil {
			return Detail{}, err
		}
		events = append(events, res.GetHistory().GetEvents()...)
		token = res.GetNextPageToken()
		if len(token) == 0 {
			break
		}
		if len(events) >= maxHistoryEvents {
			d.StepsTruncated = true
			break
		}
	}
	now := time.Now()
	d.Steps, d.LastFailure = steps(run.Kind, events, desc.GetPendingActivities(), now)
	if wt := desc.GetPendingWorkflowTask(); wt != nil && wt.GetState() == enums.PENDING_WORKFLOW_TASK_STATE_SCHEDULED && wt.GetScheduledTime() != nil &&
		now.Sub(wt.GetScheduledTime().AsTime()) > time.Second {
		s := Step{Type: StepWorkflowTask, Name: "workflow_task", Status: StepScheduled, StartedAt: wt.GetScheduledTime().AsTime(), Attempts: int(wt.GetAttempt())}
		s.Description = describeStep(run.Kind, s, now)
		d.Steps = append(d.Steps, s)
	}
	return d, nil
}

// PayloadIs reports whether a keyword payload (a search attribute's value) is s.
func PayloadIs(p *commonpb.Payload, s string) bool { return keyword(p) == s }

// ScheduleState is how an integration's Temporal Schedule stands.
type ScheduleState struct {
	Status   string // active, paused, none (no schedule: manual, or not yet applied), unknown (Temporal did not answer)
	PausedBy string // operator (paused in the Temporal UI or CLI) or integration (the integration is not active); "" unless paused
	Note     string // the schedule's note when paused
}

// ScheduleStateBudget bounds the wait for an integration's schedule state (or the reader's
// deadline when shorter): it is one field of GET /v1/integrations/{id}, which must not wait
// on a hanging Temporal as long as the workflow view may.
const ScheduleStateBudget = time.Second

// Schedule reads the state of the schedule of the tenant's integration (the caller loaded
// the integration in the tenant's transaction: the id is the tenant's). Temporal down or late
// is Status unknown, not an error: the integration's own record still answers.
func (r Reader) Schedule(ctx context.Context, tenantID uuid.UUID, integrationID string) ScheduleState {
	ctx, cancel := r.deadline(ctx)
	defer cancel()
	ctx, cancelBudget := context.WithTimeout(ctx, ScheduleStateBudget)
	defer cancelBudget()
	desc, err := r.Temporal.ScheduleClient().GetHandle(ctx, IntegrationScheduleID(tenantID.String(), integrationID)).Describe(ctx)
	if _, nf := errors.AsType[*serviceerror.NotFound](err); nf {
		return ScheduleState{Status: "none"}
	}
	if err != nil || desc == nil || desc.Schedule.State == nil {
		return ScheduleState{Status: "unknown"}
	}
	st := desc.Schedule.State
	if !st.Paused {
		return ScheduleState{Status: "active"}
	}
	by := "operator"
	if st.Note == ScheduleNoteActive || st.Note == ScheduleNotePaused {
		by = "integration"
	}
	return ScheduleState{Status: "paused", PausedBy: by, Note: st.Note}
}
