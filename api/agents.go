package api

// The workflow view (/api/v1/agents/workflows): a tenant's Temporal runs for REST clients and
// operators without Temporal UI access. Rules live in internal/runs: which kinds a caller
// reads (the read permission of the /v1 resources a kind works on), the visibility query by
// the TenantId search attribute, steps in words, the allow-list of startable names and the
// cancel. Starts and cancels go through the outbox like every other start; reads ask
// Temporal with a deadline (WORKFLOWS_TIMEOUT), past which the answer is 503.

import (
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/runs"
	"github.com/valuecase/valuecase/internal/wire"
)

const (
	maxRunPageSize = 100
	maxRunIDLen    = 400 // our ids are ~150 characters; Temporal allows 1,000
	maxFilterItems = 10
)

// agentsRoutes mounts the workflow view on /api/v1/agents, behind the same authentication,
// tenant, rate limits, transaction and Idempotency-Key handling as /v1. Permissions are
// checked per kind and per name in the handlers (a caller may hold some kinds only).
func (s *Server) agentsRoutes(api1 fiber.Router) {
	agents := api1.Group("/agents", s.authenticate, s.tenant, s.rateLimit, s.tenantTx, s.idempotency)
	agents.Get("/workflows", s.listRuns)
	agents.Post("/workflows", s.startRun)
	agents.Get("/workflows/:id", s.getRun)
	agents.Post("/workflows/:id/cancel", s.cancelRun)
}

func (s *Server) runsReader() runs.Reader {
	return runs.Reader{Temporal: s.Temporal, Namespace: s.Config.TemporalNamespace, Deadline: s.Config.WorkflowsTimeout}
}

type runObjectJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	URL  string `json:"url"`
}

// runJSON is one run in the list and the detail.
type runJSON struct {
	ID          string         `json:"id"`
	RunID       string         `json:"run_id"`
	Kind        string         `json:"kind"`
	Status      string         `json:"status"`
	Summary     string         `json:"summary"`
	Object      *runObjectJSON `json:"object"`
	ResourceURL *string        `json:"resource_url"`
	StartedAt   string         `json:"started_at"`
	ClosedAt    *string        `json:"closed_at"`
	LastFailure *string        `json:"last_failure"`
	Cancelable  bool           `json:"cancelable"`
	URL         string         `json:"url"`
}

type runStepJSON struct {
	Type          string  `json:"type"`
	Name          string  `json:"name"`
	Description   string  `json:"description"`
	Status        string  `json:"status"`
	Attempts      int     `json:"attempts"`
	StartedAt     string  `json:"started_at"`
	ClosedAt      *string `json:"closed_at"`
	FiresAt       *string `json:"fires_at"`
	NextAttemptAt *string `json:"next_attempt_at"`
	LastFailure   *string `json:"last_failure"`
}

type runDetailJSON struct {
	runJSON
	WorkflowType   string        `json:"workflow_type"`
	TaskQueue      string        `json:"task_queue"`
	Steps          []runStepJSON `json:"steps"`
	StepsTruncated bool          `json:"steps_truncated"`
}

// runURL is a run's URL: the workflow id is one path segment, its slashes escaped.
func runURL(id string) string { return "/api/v1/agents/workflows/" + url.PathEscape(id) }

func toRunJSON(r runs.Run) runJSON {
	j := runJSON{
		ID: r.ID, RunID: r.RunID, Kind: string(r.Kind), Status: string(r.Status), Summary: r.Subject.Summary,
		ResourceURL: nonEmpty(r.Subject.ResourceURL()), StartedAt: wire.Timestamp(r.StartedAt), ClosedAt: optTimestamp(r.ClosedAt),
		LastFailure: nonEmpty(r.LastFailure), URL: runURL(r.ID),
		Cancelable: r.Status == runs.Running && runs.CancelPermission(r.Kind) != "",
	}
	if o := r.Subject.Object; o.Type != "" && o.ID != "" {
		j.Object = &runObjectJSON{Type: string(o.Type), ID: o.ID, URL: o.URL()}
	}
	return j
}

// runsError maps the refusals of internal/runs.
func runsError(err error) error {
	var forbidden *runs.ErrForbiddenKind
	var missing *runs.ObjectNotFound
	var open *integration.SyncOpenError
	switch {
	case errors.Is(err, runs.ErrUnavailable):
		return &Error{Status: fiber.StatusServiceUnavailable, Code: CodeUnavailable, Message: "Temporal did not answer in time; retry shortly"}
	case errors.Is(err, runs.ErrNotFound):
		return NotFound("workflow run")
	case errors.Is(err, runs.ErrBadCursor):
		return InvalidParameter("query parameter cursor does not belong to this list (another filter, or not a cursor we handed out); start again without it")
	case errors.As(err, &forbidden):
		return Forbidden("missing permission %s (runs of kind %s)", forbidden.Permission, forbidden.Kind)
	case errors.As(err, &missing):
		return NotFound(missing.What)
	case errors.As(err, &open):
		return Conflict("%s", open.Error())
	case errors.Is(err, runs.ErrNotRunning):
		return Conflict("the run has ended; there is nothing to cancel")
	case errors.Is(err, runs.ErrNotCancelable):
		return Conflict("runs of this kind cannot be canceled over REST; they end by a decision on their resource")
	}
	return integrationError(err)
}

// listOf reads a comma-separated list of allowed values.
func (q *query) listOf(name string, allowed []string) []string {
	s, ok := q.str(name)
	if !ok {
		return nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxFilterItems && q.err == nil {
		q.err = InvalidParameter("query parameter %s takes at most %d values", name, maxFilterItems)
		return nil
	}
	for _, p := range parts {
		if !slices.Contains(allowed, p) && q.err == nil {
			q.err = InvalidParameter("query parameter %s must be a comma-separated list of %s", name, strings.Join(allowed, ", "))
			return nil
		}
	}
	return parts
}

// timeParam reads an RFC 3339 time.
func (q *query) timeParam(name string) *time.Time {
	s, ok := q.str(name)
	if !ok {
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		if q.err == nil {
			q.err = InvalidParameter("query parameter %s must be an RFC 3339 time such as 2025-01-31T00:00:00Z", name)
		}
		return nil
	}
	return &t
}

// listRuns: the tenant's runs of the kinds the caller may read, newest first (running ones first).
func (s *Server) listRuns(c *fiber.Ctx) error {
	q := parseQuery(c)
	var f runs.Filter
	for _, k := range q.listOf("kind", runs.Kinds()) {
		f.Kinds = append(f.Kinds, runs.Kind(k))
	}
	for _, st := range q.listOf("status", runs.Statuses()) {
		f.Statuses = append(f.Statuses, runs.Status(st))
	}
	f.ObjectType = runs.ObjectType(q.oneOf("object_type", "", runs.ObjectTypes))
	if id, ok := q.str("object_id"); ok {
		if _, err := uuid.Parse(id); err != nil && q.err == nil {
			q.err = InvalidParameter("query parameter object_id must be a UUID")
		}
		f.ObjectID = id
	}
	f.StartedAfter, f.StartedBefore = q.timeParam("started_after"), q.timeParam("started_before")
	size := q.intIn("page_size", defaultPageSize, 1, maxRunPageSize)
	cursor, _ := q.str("cursor")
	if err := q.done(); err != nil {
		return err
	}
	p := principal(c)
	readable := runs.Readable(p.Has)
	if len(readable) == 0 {
		return Forbidden("missing permission: reading runs needs one of %s", strings.Join(runReadPermissions(), ", "))
	}
	if err := endTx(c); err != nil { // nothing more to read from PostgreSQL: free the connection while Temporal answers
		return err
	}
	page, err := s.runsReader().List(c.UserContext(), p.TenantID, readable, f, size, cursor)
	if err != nil {
		return runsError(err)
	}
	resp := struct {
		Data []runJSON `json:"data"`
		Meta struct {
			Pagination struct {
				PageSize   int     `json:"page_size"`
				NextCursor *string `json:"next_cursor"`
			} `json:"pagination"`
		} `json:"meta"`
	}{Data: make([]runJSON, 0, len(page.Runs))}
	for _, r := range page.Runs {
		resp.Data = append(resp.Data, toRunJSON(r))
	}
	resp.Meta.Pagination.PageSize, resp.Meta.Pagination.NextCursor = size, nonEmpty(page.Next)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(resp)
}

// runReadPermissions lists the permissions that open some kind of run.
func runReadPermissions() []string {
	seen := map[rbac.Permission]bool{}
	var out []string
	for _, k := range runs.Kinds() {
		if p := runs.ReadPermission(runs.Kind(k)); !seen[p] {
			seen[p] = true
			out = append(out, string(p))
		}
	}
	return out
}

// runID reads the workflow id of the path (escaped slashes included).
func runID(c *fiber.Ctx) (string, error) {
	id, err := url.PathUnescape(c.Params("id"))
	if err != nil || id == "" || len(id) > maxRunIDLen || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", NotFound("workflow run")
	}
	return id, nil
}

// loadRun reads the tenant's run (404 for another tenant's, whatever the id says) that the
// caller may read (403 otherwise), with its steps when asked.
func (s *Server) loadRun(c *fiber.Ctx, withSteps bool) (runs.Detail, error) {
	id, err := runID(c)
	if err != nil {
		return runs.Detail{}, err
	}
	p := principal(c)
	var d runs.Detail
	if withSteps {
		d, err = s.runsReader().Get(c.UserContext(), p.TenantID, id)
	} else {
		d.Run, err = s.runsReader().Run(c.UserContext(), p.TenantID, id)
	}
	if err != nil {
		return d, runsError(err)
	}
	if perm := runs.ReadPermission(d.Kind); !p.Has(perm) {
		return d, Forbidden("missing permission %s (runs of kind %s)", perm, d.Kind)
	}
	return d, nil
}

func (s *Server) getRun(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	if err := endTx(c); err != nil {
		return err
	}
	d, err := s.loadRun(c, true)
	if err != nil {
		return err
	}
	out := runDetailJSON{runJSON: toRunJSON(d.Run), WorkflowType: d.WorkflowType, TaskQueue: d.TaskQueue, Steps: make([]runStepJSON, 0, len(d.Steps)), StepsTruncated: d.StepsTruncated}
	for _, st := range d.Steps {
		out.Steps = append(out.Steps, runStepJSON{
			Type: string(st.Type), Name: st.Name, Description: st.Description, Status: st.Status, Attempts: st.Attempts,
			StartedAt: wire.Timestamp(st.StartedAt), ClosedAt: optTimestamp(st.ClosedAt), FiresAt: optTimestamp(st.FiresAt),
			NextAttemptAt: optTimestamp(st.NextAttemptAt), LastFailure: nonEmpty(st.LastFailure),
		})
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(out)
}

// startedJSON answers a start: the run's id and URL (it exists once the relay started it,
// usually within a second) and the row that tracks it.
type startedJSON struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Kind        string         `json:"kind"`
	Status      string         `json:"status"`
	Object      *runObjectJSON `json:"object"`
	ResourceURL *string        `json:"resource_url"`
	URL         string         `json:"url"`
}

// startRun starts an allow-listed workflow by name: the same checks and the same row and
// outbox event as its /v1 route, in the request's transaction (Idempotency-Key applies).
func (s *Server) startRun(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	name := b.Text("name", true, 100)
	var input json.RawMessage
	if b.Has("input") && !b.IsNull("input") {
		input = b.Raw("input")
		if len(input) == 0 || input[0] != '{' {
			b.Fail("input", "invalid_type", "must be an object")
		}
	}
	if name != nil && runs.StartPermission(runs.Name(*name)) == "" {
		b.Fail("name", "invalid_value", "must be one of %s", strings.Join(runs.Names(), ", "))
	}
	if err := b.Done(); err != nil {
		return err
	}
	n := runs.Name(*name)
	p := principal(c)
	if perm := runs.StartPermission(n); !p.Has(perm) {
		return Forbidden("missing permission %s", perm)
	}
	started, err := runs.Start(c.UserContext(), requestTx(c), p.TenantID, p.Subject, n, input)
	if err != nil {
		if isValidation(err) {
			return err
		}
		return runsError(err)
	}
	out := startedJSON{ID: started.ID, Name: string(n), Kind: string(started.Kind), Status: "queued",
		ResourceURL: nonEmpty(started.Subject.ResourceURL()), URL: runURL(started.ID)}
	if o := started.Subject.Object; o.ID != "" {
		out.Object = &runObjectJSON{Type: string(o.Type), ID: o.ID, URL: o.URL()}
	}
	c.Location(out.URL)
	return c.Status(fiber.StatusAccepted).JSON(out)
}

// cancelRun cancels a running export or sync of the tenant: its row says canceled at once,
// and the relay cancels the Temporal run. The transaction stays open while Temporal is asked
// about the run (bounded by WORKFLOWS_TIMEOUT), so the row, the event and an idempotent
// answer commit together.
func (s *Server) cancelRun(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	if len(c.Body()) > 0 {
		return InvalidParameter("this request takes no body")
	}
	d, err := s.loadRun(c, false)
	if err != nil {
		return err
	}
	perm := runs.CancelPermission(d.Kind)
	if perm == "" {
		return Conflict("runs of kind %s cannot be canceled over REST; they end by a decision on their resource", d.Kind)
	}
	p := principal(c)
	if !p.Has(perm) {
		return Forbidden("missing permission %s", perm)
	}
	if err := runs.Cancel(c.UserContext(), requestTx(c), p.TenantID, d.Run, p.Subject); err != nil {
		return runsError(err)
	}
	out := struct {
		runJSON
		CancelRequested bool `json:"cancel_requested"`
	}{toRunJSON(d.Run), true}
	out.Cancelable = false
	c.Location(out.URL)
	return c.Status(fiber.StatusAccepted).JSON(out)
}
