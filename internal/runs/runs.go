// Package runs is the workflow view of the service: a tenant's Temporal runs
// (exports, syncs, approvals, reviews, bulk imports, webhook retries) read
// from Temporal visibility by search attribute, described in words, started
// by name through the outbox and canceled, for REST clients and operators
// without Temporal UI access (GET/POST /api/v1/agents/workflows).
//
// A run belongs to the tenant its TenantId search attribute names: that
// attribute (set by every start, never by a client) is what is checked, never
// the tenant part of the workflow id.
package runs

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/internal/rbac"
)

// The search attributes every start and every schedule sets (workflows/start.go
// registers them; `make run`'s and the tests' dev servers declare them).
const (
	TenantIDAttribute   = "TenantId"
	ObjectTypeAttribute = "ObjectType"
	ObjectIDAttribute   = "ObjectId"
)

// SearchAttributes lists them (all Keyword).
var SearchAttributes = []string{TenantIDAttribute, ObjectTypeAttribute, ObjectIDAttribute}

// Memo keys every start writes: the summary in words (the list shows it; the
// static summary of the UI is not returned by visibility) and the row that
// tracks the run, when there is one.
const (
	memoSummary      = "summary"
	memoResourceType = "resource_type"
	memoResourceID   = "resource_id"
)

// ObjectType is the kind of business object a run is about.
type ObjectType string

// Object types.
const (
	ObjectBusinessCase ObjectType = "business_case"
	ObjectIntegration  ObjectType = "integration"
	ObjectInitiative   ObjectType = "initiative"
	ObjectBulkJob      ObjectType = "bulk_job"
	ObjectWebhook      ObjectType = "webhook"
)

// ObjectTypes lists them (the object_type filter).
var ObjectTypes = []string{string(ObjectBusinessCase), string(ObjectIntegration), string(ObjectInitiative), string(ObjectBulkJob), string(ObjectWebhook)}

// Object is the business object a run is about.
type Object struct {
	Type ObjectType
	ID   string
}

// URL is the object's /v1 resource.
func (o Object) URL() string {
	switch o.Type {
	case ObjectBusinessCase:
		return "/v1/business-cases/" + o.ID
	case ObjectIntegration:
		return "/v1/integrations/" + o.ID
	case ObjectInitiative:
		return "/v1/initiatives/" + o.ID
	case ObjectBulkJob:
		return "/v1/bulk/jobs/" + o.ID
	case ObjectWebhook:
		return "/v1/webhooks/" + o.ID
	}
	return ""
}

// ResourceType is the kind of row that tracks a run's progress and outcome.
type ResourceType string

// Resource types.
const (
	ResourceExport   ResourceType = "export"
	ResourceSync     ResourceType = "sync"
	ResourceDelivery ResourceType = "delivery"
)

// Subject is what a start says about its run: the object (search attributes),
// the row that tracks it (memo) and a one-line summary in words (static
// summary and memo).
type Subject struct {
	Object       Object
	ResourceType ResourceType // "" when no row tracks the run
	ResourceID   string
	Summary      string
}

// Memo is the memo a start writes for s.
func (s Subject) Memo() map[string]any {
	m := map[string]any{memoSummary: s.Summary}
	if s.ResourceType != "" {
		m[memoResourceType], m[memoResourceID] = string(s.ResourceType), s.ResourceID
	}
	return m
}

// ResourceURL is the /v1 URL of the row that tracks the run ("" when none).
func (s Subject) ResourceURL() string {
	switch s.ResourceType {
	case ResourceExport:
		return fmt.Sprintf("/v1/business-cases/%s/exports/%s", s.Object.ID, s.ResourceID)
	case ResourceSync:
		return fmt.Sprintf("/v1/integrations/%s/syncs/%s", s.Object.ID, s.ResourceID)
	case ResourceDelivery:
		return fmt.Sprintf("/v1/webhooks/%s/deliveries/%s", s.Object.ID, s.ResourceID)
	}
	return ""
}

// Kind is what a run does, in words.
type Kind string

// Kinds of run.
const (
	KindExport               Kind = "export"
	KindIntegrationSync      Kind = "integration_sync"
	KindBusinessCaseApproval Kind = "business_case_approval"
	KindInitiativeReview     Kind = "initiative_review"
	KindBulkImport           Kind = "bulk_import"
	KindWebhookRetries       Kind = "webhook_retries"
	KindWebhookRedelivery    Kind = "webhook_redelivery"
	KindMaintenance          Kind = "maintenance"
)

// kindInfo is one row of the kinds table.
type kindInfo struct {
	kind Kind
	// workflowTypes are the Temporal workflow type names (the functions'
	// names in workflows/, checked by a test there).
	workflowTypes []string
	// read is the permission to see runs of the kind: the read permission of
	// the /v1 resources they work on.
	read rbac.Permission
	// cancel is the permission to cancel one (that of the /v1 route that
	// starts it); "" when runs of the kind cannot be canceled over REST.
	cancel rbac.Permission
}

// kinds is the one table of kinds: workflow types, who reads, who cancels.
// Approvals and reviews end by a decision on their resource, retries by
// delivery or by disabling the subscription, bulk imports by their job: a
// cancel would leave those resources in a state nobody resolves, so only
// exports and syncs (whose rows record "canceled") can be canceled.
var kinds = []kindInfo{
	{KindExport, []string{"BusinessCaseExportWorkflow"}, rbac.BusinessCasesRead, rbac.BusinessCasesRead},
	{KindIntegrationSync, []string{"IntegrationSyncWorkflow", "IntegrationScheduledSyncWorkflow"}, rbac.AdminConfig, rbac.AdminConfig},
	{KindBusinessCaseApproval, []string{"BusinessCaseApprovalWorkflow"}, rbac.BusinessCasesRead, ""},
	{KindInitiativeReview, []string{"InitiativeReviewWorkflow"}, rbac.InitiativesRead, ""},
	{KindBulkImport, []string{"BulkImportWorkflow"}, rbac.AdminConfig, ""},
	{KindWebhookRetries, []string{"WebhookRetryWorkflow"}, rbac.WebhooksManage, ""},
	{KindWebhookRedelivery, []string{"WebhookRedeliveryWorkflow"}, rbac.WebhooksManage, ""},
	{KindMaintenance, []string{"RetentionWorkflow"}, rbac.AdminConfig, ""},
}

// Kinds lists every kind (the kind filter).
func Kinds() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k.kind)
	}
	return out
}

func infoOf(k Kind) (kindInfo, bool) {
	i := slices.IndexFunc(kinds, func(x kindInfo) bool { return x.kind == k })
	if i < 0 {
		return kindInfo{}, false
	}
	return kinds[i], true
}

// KindOf is the kind of a workflow type ("" when the type is not one of ours).
func KindOf(workflowType string) Kind {
	for _, k := range kinds {
		if slices.Contains(k.workflowTypes, workflowType) {
			return k.kind
		}
	}
	return ""
}

// WorkflowTypes lists every workflow type the table knows (for the test that
// keeps it in step with the worker's registrations).
func WorkflowTypes() []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.workflowTypes...)
	}
	return out
}

// ReadPermission is the permission to see runs of k.
func ReadPermission(k Kind) rbac.Permission {
	i, _ := infoOf(k)
	return i.read
}

// CancelPermission is the permission to cancel a run of k ("" : not cancelable).
func CancelPermission(k Kind) rbac.Permission {
	i, _ := infoOf(k)
	return i.cancel
}

// Readable are the kinds a caller holding has may see.
func Readable(has func(rbac.Permission) bool) []Kind {
	var out []Kind
	for _, k := range kinds {
		if has(k.read) {
			out = append(out, k.kind)
		}
	}
	return out
}

// Status of a run, Temporal's in words.
type Status string

// Run statuses.
const (
	Running        Status = "running"
	Completed      Status = "completed"
	Failed         Status = "failed"
	Canceled       Status = "canceled"
	Terminated     Status = "terminated"
	TimedOut       Status = "timed_out"
	ContinuedAsNew Status = "continued_as_new"
)

// statusNames maps each status to the visibility query's ExecutionStatus value.
var statusNames = []struct {
	status     Status
	visibility string
}{
	{Running, "Running"}, {Completed, "Completed"}, {Failed, "Failed"}, {Canceled, "Canceled"},
	{Terminated, "Terminated"}, {TimedOut, "TimedOut"}, {ContinuedAsNew, "ContinuedAsNew"},
}

// Statuses lists them (the status filter).
func Statuses() []string {
	out := make([]string, len(statusNames))
	for i, s := range statusNames {
		out[i] = string(s.status)
	}
	return out
}

// Filter narrows a list. Every value has been checked against its enum (or
// parsed as a UUID or a time) by the caller; Query quotes them anyway.
type Filter struct {
	Kinds         []Kind   // empty: every kind in allowed
	Statuses      []Status // empty: any
	ObjectType    ObjectType
	ObjectID      string
	StartedAfter  *time.Time // StartTime >= it
	StartedBefore *time.Time // StartTime < it
}

// ErrForbiddenKind: the filter asks for a kind the caller may not read.
type ErrForbiddenKind struct {
	Kind       Kind
	Permission rbac.Permission
}

func (e *ErrForbiddenKind) Error() string {
	return fmt.Sprintf("runs of kind %s need permission %s", e.Kind, e.Permission)
}

// Query is the visibility query of a tenant's runs that f selects among the
// kinds allowed (the caller's readable kinds). Visibility orders it: running
// runs first, then by close time, newest first.
func Query(tenantID uuid.UUID, allowed []Kind, f Filter) (string, error) {
	want := f.Kinds
	if len(want) == 0 {
		want = allowed
	}
	var types []string
	for _, k := range want {
		info, ok := infoOf(k)
		if !ok {
			return "", fmt.Errorf("runs: unknown kind %q", k)
		}
		if !slices.Contains(allowed, k) {
			return "", &ErrForbiddenKind{Kind: k, Permission: info.read}
		}
		types = append(types, info.workflowTypes...)
	}
	parts := []string{fmt.Sprintf("%s = %s", TenantIDAttribute, quote(tenantID.String())), "WorkflowType IN (" + quoteAll(types) + ")"}
	if len(f.Statuses) > 0 {
		var names []string
		for _, s := range f.Statuses {
			i := slices.IndexFunc(statusNames, func(x struct {
				status     Status
				visibility string
			}) bool {
				return x.status == s
			})
			if i < 0 {
				return "", fmt.Errorf("runs: unknown status %q", s)
			}
			names = append(names, statusNames[i].visibility)
		}
		parts = append(parts, "ExecutionStatus IN ("+quoteAll(names)+")")
	}
	if f.ObjectType != "" {
		parts = append(parts, fmt.Sprintf("%s = %s", ObjectTypeAttribute, quote(string(f.ObjectType))))
	}
	if f.ObjectID != "" {
		parts = append(parts, fmt.Sprintf("%s = %s", ObjectIDAttribute, quote(f.ObjectID)))
	}
	if f.StartedAfter != nil {
		parts = append(parts, "StartTime >= "+quote(f.StartedAfter.UTC().Format(time.RFC3339Nano)))
	}
	if f.StartedBefore != nil {
		parts = append(parts, "StartTime < "+quote(f.StartedBefore.UTC().Format(time.RFC3339Nano)))
	}
	return strings.Join(parts, " AND "), nil
}

// quote is a visibility query string literal. Values are checked before
// they get here; a quote or backslash is escaped all the same.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return strings.Join(q, ", ")
}

// ErrBadCursor: a cursor that this list did not hand out (another filter,
// another tenant, or not a cursor at all).
var ErrBadCursor = errors.New("runs: the cursor does not belong to this list; start again without it")

// cursor is what an opaque cursor holds: visibility's page token and a
// digest of the query it continues, so it cannot continue another one.
type cursor struct {
	Query string `json:"q"`
	Token []byte `json:"t"`
}

func queryDigest(query string) string {
	sum := sha256.Sum256([]byte(query))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// EncodeCursor wraps a page token of query ("" when there is no next page).
func EncodeCursor(query string, token []byte) string {
	if len(token) == 0 {
		return ""
	}
	b, _ := json.Marshal(cursor{Query: queryDigest(query), Token: token})
	return base64.RawURLEncoding.EncodeToString(b)
}

// MaxCursorLen bounds a cursor a client sends back.
const MaxCursorLen = 4096

// DecodeCursor unwraps a cursor of query.
func DecodeCursor(query, s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > MaxCursorLen {
		return nil, ErrBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrBadCursor
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Query != queryDigest(query) || len(c.Token) == 0 {
		return nil, ErrBadCursor
	}
	return c.Token, nil
}
