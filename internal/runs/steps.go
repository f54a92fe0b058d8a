package runs

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
)

// StepType is what a step is.
type StepType string

// Step types.
const (
	StepActivity StepType = "activity"
	StepTimer    StepType = "timer"
	StepChild    StepType = "child_workflow"
	// StepWorkflowTask: the run waits for a worker to run its code (a workflow task
	// scheduled and not started: no worker polls its task queue, or all are busy).
	StepWorkflowTask StepType = "workflow_task"
)

// Step statuses, in words.
const (
	StepScheduled = "scheduled" // waiting for a worker
	StepRunning   = "running"
	StepRetrying  = "retrying" // an attempt failed; the next one is due at NextAttemptAt
	StepCompleted = "completed"
	StepFailed    = "failed"
	StepTimedOut  = "timed_out"
	StepCanceled  = "canceled"
	StepWaiting   = "waiting" // a timer not yet fired
	StepFired     = "fired"
)

// Step is one activity, timer or child run of a run, described in words.
type Step struct {
	Type          StepType
	Name          string // activity or child workflow type; "timer" for timers
	Description   string // what the step does and where it stands, in a sentence
	Status        string
	Attempts      int // activities: attempts made (0 before the first starts)
	StartedAt     time.Time
	ClosedAt      *time.Time
	FiresAt       *time.Time // timers: when it fires (or fired)
	NextAttemptAt *time.Time // activities retrying: when the next attempt is due
	LastFailure   string
}

// maxFailureLen bounds a failure text shown to a client.
const maxFailureLen = 500

// activityWords says what each activity does (the worker's activities; a new
// one without a row is named from its type).
var activityWords = map[string]string{
	"ExportTakeSnapshot":           "take a snapshot of the business case",
	"ExportRender":                 "render and store the document",
	"ExportFail":                   "record why the export failed",
	"ExportCancel":                 "record that the export was canceled",
	"IntegrationSyncBegin":         "mark the sync running",
	"IntegrationSyncFetch":         "fetch pages from the provider and write them",
	"IntegrationSyncFinish":        "record the sync's outcome",
	"IntegrationSyncCancel":        "record that the sync was canceled",
	"IntegrationSyncScheduled":     "create the scheduled sync's record",
	"BusinessCaseApprovalOpen":     "open the approval round",
	"BusinessCaseApprovalStatus":   "read the business case's status",
	"BusinessCaseApprovalRemind":   "remind the approvers",
	"BusinessCaseApprovalEscalate": "escalate the approval",
	"BusinessCaseApprovalClose":    "close the approval round",
	"ReviewOpen":                   "open the review",
	"ReviewStatus":                 "read the initiative's status",
	"ReviewRemind":                 "remind the reviewers",
	"ReviewClose":                  "close the review",
	"BulkImportRun":                "import the job's rows",
	"BulkImportFail":               "record why the import failed",
	"WebhookAttempt":               "attempt a delivery to the webhook",
	"WebhookDisable":               "disable the webhook after the last failed attempt",
	"WebhookRedeliver":             "deliver the event to the webhook again",
	"RetentionPurge":               "remove rows past their retention",
	"IntegrationSyncWorkflow":      "the sync itself",
}

// timerWords says what a run's timers wait for.
var timerWords = map[Kind]string{
	KindWebhookRetries:       "the next delivery attempt",
	KindBusinessCaseApproval: "the next reminder or escalation",
	KindInitiativeReview:     "the next reminder to the reviewers",
}

// words names an activity or workflow type in words.
func words(name string) string {
	if w := activityWords[name]; w != "" {
		return w
	}
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// steps reads a run's history (and its pending activities, which carry the
// attempts and failures of an activity still retrying) into steps, and the
// run's own failure.
func steps(kind Kind, events []*historypb.HistoryEvent, pending []*workflowpb.PendingActivityInfo, now time.Time) ([]Step, string) {
	var out []Step
	byScheduled := map[int64]int{} // activity scheduled event id → step
	byActivityID := map[string]int{}
	byTimer := map[string]int{}
	byChild := map[int64]int{}
	startDelay := -1 // the step of a start delay not yet over
	var runFailure string
	closeAt := func(i int, ev *historypb.HistoryEvent, status string, f *failurepb.Failure) {
		t := ev.GetEventTime().AsTime()
		out[i].Status, out[i].ClosedAt = status, &t
		if f != nil {
			out[i].LastFailure = failureText(f)
		}
	}
	for _, ev := range events {
		at := ev.GetEventTime().AsTime()
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := ev.GetActivityTaskScheduledEventAttributes()
			out = append(out, Step{Type: StepActivity, Name: a.GetActivityType().GetName(), Status: StepScheduled, StartedAt: at})
			byScheduled[ev.GetEventId()] = len(out) - 1
			byActivityID[a.GetActivityId()] = len(out) - 1
		case enums.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a := ev.GetActivityTaskStartedEventAttributes()
			if i, ok := byScheduled[a.GetScheduledEventId()]; ok {
				out[i].Status, out[i].Attempts = StepRunning, int(a.GetAttempt())
				if f := a.GetLastFailure(); f != nil {
					out[i].LastFailure = failureText(f)
				}
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if i, ok := byScheduled[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]; ok {
				closeAt(i, ev, StepCompleted, nil)
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			a := ev.GetActivityTaskFailedEventAttributes()
			if i, ok := byScheduled[a.GetScheduledEventId()]; ok {
				closeAt(i, ev, StepFailed, a.GetFailure())
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			a := ev.GetActivityTaskTimedOutEventAttributes()
			if i, ok := byScheduled[a.GetScheduledEventId()]; ok {
				closeAt(i, ev, StepTimedOut, a.GetFailure())
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			if i, ok := byScheduled[ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()]; ok {
				closeAt(i, ev, StepCanceled, nil)
			}
		case enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			// A delayed start (a webhook retry run waits for attempt 2 this way) is a timer
			// before the run's first step, though its history holds no timer event.
			if d := ev.GetWorkflowExecutionStartedEventAttributes().GetFirstWorkflowTaskBackoff().AsDuration(); d > 0 {
				fires := at.Add(d)
				out = append(out, Step{Type: StepTimer, Name: "timer", Status: StepWaiting, StartedAt: at, FiresAt: &fires})
				startDelay = len(out) - 1
			}
		case enums.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			if startDelay >= 0 {
				closeAt(startDelay, ev, StepFired, nil)
				startDelay = -1
			}
		case enums.EVENT_TYPE_TIMER_STARTED:
			a := ev.GetTimerStartedEventAttributes()
			fires := at.Add(a.GetStartToFireTimeout().AsDuration())
			out = append(out, Step{Type: StepTimer, Name: "timer", Status: StepWaiting, StartedAt: at, FiresAt: &fires})
			byTimer[a.GetTimerId()] = len(out) - 1
		case enums.EVENT_TYPE_TIMER_FIRED:
			if i, ok := byTimer[ev.GetTimerFiredEventAttributes().GetTimerId()]; ok {
				closeAt(i, ev, StepFired, nil)
			}
		case enums.EVENT_TYPE_TIMER_CANCELED:
			if i, ok := byTimer[ev.GetTimerCanceledEventAttributes().GetTimerId()]; ok {
				closeAt(i, ev, StepCanceled, nil)
			}
		case enums.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes()
			out = append(out, Step{Type: StepChild, Name: a.GetWorkflowType().GetName(), Status: StepScheduled, StartedAt: at})
			byChild[ev.GetEventId()] = len(out) - 1
		case enums.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
			if i, ok := byChild[ev.GetChildWorkflowExecutionStartedEventAttributes().GetInitiatedEventId()]; ok {
				out[i].Status = StepRunning
			}
		case enums.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
			if i, ok := byChild[ev.GetChildWorkflowExecutionCompletedEventAttributes().GetInitiatedEventId()]; ok {
				closeAt(i, ev, StepCompleted, nil)
			}
		case enums.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
			a := ev.GetChildWorkflowExecutionFailedEventAttributes()
			if i, ok := byChild[a.GetInitiatedEventId()]; ok {
				closeAt(i, ev, StepFailed, a.GetFailure())
			}
		case enums.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED:
			if i, ok := byChild[ev.GetChildWorkflowExecutionCanceledEventAttributes().GetInitiatedEventId()]; ok {
				closeAt(i, ev, StepCanceled, nil)
			}
		case enums.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT:
			if i, ok := byChild[ev.GetChildWorkflowExecutionTimedOutEventAttributes().GetInitiatedEventId()]; ok {
				closeAt(i, ev, StepTimedOut, nil)
			}
		case enums.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED:
			if i, ok := byChild[ev.GetChildWorkflowExecutionTerminatedEventAttributes().GetInitiatedEventId()]; ok {
				closeAt(i, ev, StepCanceled, nil)
			}
		default:
			if text := closeFailure(ev); text != "" {
				runFailure = text
			}
		}
	}
	// A retried activity's attempts and failures live on the pending activity,
	// not in the history, until it ends.
	for _, p := range pending {
		i, ok := byActivityID[p.GetActivityId()]
		if !ok {
			continue
		}
		s := &out[i]
		s.Attempts = int(p.GetAttempt())
		if f := p.GetLastFailure(); f != nil {
			s.LastFailure = failureText(f)
		}
		switch {
		case p.GetState() == enums.PENDING_ACTIVITY_STATE_STARTED:
			s.Status = StepRunning
		case p.GetState() == enums.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED:
			s.Status = StepCanceled
		case p.GetAttempt() > 1:
			s.Status = StepRetrying
			if t := p.GetNextAttemptScheduleTime(); t != nil {
				next := t.AsTime()
				s.NextAttemptAt = &next
			}
		default:
			s.Status = StepScheduled
		}
	}
	for i := range out {
		out[i].Description = describeStep(kind, out[i], now)
	}
	if runFailure == "" {
		// A running run whose current step keeps failing: that failure is the run's last one.
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].Status == StepRetrying && out[i].LastFailure != "" {
				runFailure = out[i].LastFailure
				break
			}
		}
	}
	return out, runFailure
}

// describeStep is a step in one sentence.
func describeStep(kind Kind, s Step, now time.Time) string {
	switch s.Type {
	case StepTimer:
		what := timerWords[kind]
		if what == "" {
			what = "a timer"
		}
		fires := s.FiresAt.UTC().Format(time.RFC3339)
		switch s.Status {
		case StepWaiting:
			return fmt.Sprintf("Waits for %s, due at %s (in %s).", what, fires, max(s.FiresAt.Sub(now), 0).Round(time.Second))
		case StepFired:
			return fmt.Sprintf("Waited for %s until %s.", what, fires)
		}
		return fmt.Sprintf("Stopped waiting for %s (was due at %s).", what, fires)
	case StepWorkflowTask:
		return fmt.Sprintf("Waits for a worker to run the workflow's next step (scheduled %s ago).", max(now.Sub(s.StartedAt), 0).Round(time.Second))
	case StepChild:
		return sentence(fmt.Sprintf("Runs %s: %s", words(s.Name), strings.ReplaceAll(s.Status, "_", " ")))
	}
	text := words(s.Name)
	switch s.Status {
	case StepScheduled:
		text += ": waiting for a worker"
	case StepRunning:
		text += fmt.Sprintf(": running (attempt %d)", max(s.Attempts, 1))
	case StepRetrying:
		text += fmt.Sprintf(": attempt %d failed", s.Attempts-1)
		if s.NextAttemptAt != nil {
			text += ", next attempt at " + s.NextAttemptAt.UTC().Format(time.RFC3339)
		}
	case StepCompleted:
		text += ": done"
	case StepFailed:
		text += ": failed"
	case StepTimedOut:
		text += ": took too long and was stopped"
	case StepCanceled:
		text += ": canceled"
	}
	if s.LastFailure != "" && s.Status != StepCompleted {
		text += " (" + s.LastFailure + ")"
	}
	return sentence(text)
}

// sentence capitalises the first letter and ends with a period.
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:] + "."
}

// publicFailureTypes are the application error types whose message is
// written for the client (activities/integration.go: the provider's answer,
// the same text the sync's record shows; BadInput names the bad id). Any
// other failure may carry internal detail (a driver's error text) and is
// named by its kind only: operators read the rest in the Temporal UI.
var publicFailureTypes = []string{"ProviderUnauthorized", "ProviderRetryable", "ProviderPermanent", "BadInput", "InvalidCase", "DeliveryGone"}

// failureText is a failure in words, bounded.
func failureText(f *failurepb.Failure) string {
	for f != nil {
		switch {
		case f.GetActivityFailureInfo() != nil || f.GetChildWorkflowExecutionFailureInfo() != nil:
			if f.GetCause() == nil {
				return "a step failed"
			}
			f = f.GetCause() // the wrapper says only "activity error"
			continue
		case f.GetApplicationFailureInfo() != nil:
			if slices.Contains(publicFailureTypes, f.GetApplicationFailureInfo().GetType()) {
				return truncate(strings.TrimSpace(f.GetMessage()), maxFailureLen)
			}
			return "an internal error (operators see the details in the Temporal UI)"
		case f.GetTimeoutFailureInfo() != nil:
			t := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(f.GetTimeoutFailureInfo().GetTimeoutType().String(), "TIMEOUT_TYPE_"), "_", "-"))
			return "took too long (" + t + " timeout)"
		case f.GetCanceledFailureInfo() != nil:
			return "canceled"
		case f.GetTerminatedFailureInfo() != nil:
			return "terminated by an operator"
		case f.GetServerFailureInfo() != nil:
			return "the workflow service refused the step"
		}
		return "an internal error (operators see the details in the Temporal UI)"
	}
	return ""
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
