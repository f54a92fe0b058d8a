package businesscase

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/wire"
)

// maxShortTextLen bounds an id or a level as a body sends it.
const maxShortTextLen = 100

// Body is a case as a body (create, PUT, PATCH) sends it.
type Body struct {
	Name, Template, InitiativeID *string
	Sections                     []string
	Content                      map[Section]*Part // nil part: remove (PATCH)
	DecisionRequest              *DecisionRequest  // with Has["decision_request"]: nil removes
	Has                          map[string]bool
}

// ReadBody reads a case body. full (create, PUT) needs name, template and
// sections; create needs initiative_id too. The caller ends with b.Done.
func ReadBody(b *input.Object, full, create bool) Body {
	f := Body{Has: map[string]bool{}}
	for _, name := range []string{"name", "template", "sections", "content", "decision_request"} {
		f.Has[name] = b.Has(name)
	}
	f.InitiativeID = b.Text("initiative_id", create, maxShortTextLen)
	f.Name = input.Trimmed(b.Text("name", full || f.Has["name"], MaxNameLen))
	f.Template = b.Enum("template", full || f.Has["template"], validation.Names(Templates))
	f.Sections = b.EnumList("sections", "section", full || f.Has["sections"], validation.Names(Sections))
	f.Content = readContent(b, !full)
	f.DecisionRequest = readDecisionRequest(b)
	b.Ignore("id", "status", "version", "previous_version_id", "submitted_at", "submitted_by", "approval", "snapshot",
		"approval_round", "created_by", "created_at", "updated_at")
	return f
}

// readDecisionRequest reads `decision_request`: an object {ask, amount,
// currency, decide_by, recommendation} read with the body's own field
// readers (errors named decision_request.<field>); null or absent: none.
// The rules beyond types and lengths are CheckDefinition's.
func readDecisionRequest(b *input.Object) *DecisionRequest {
	if !b.Has("decision_request") || b.IsNull("decision_request") {
		return nil
	}
	sub, ok := input.Decode(b.Raw("decision_request"))
	if !ok {
		b.Fail("decision_request", "invalid_type", "must be an object {ask, amount, currency, decide_by, recommendation}")
		return nil
	}
	var r DecisionRequest
	if ask := sub.Text("ask", true, MaxAskLen); ask != nil {
		r.Ask = *ask
	}
	if sub.Has("amount") && !sub.IsNull("amount") {
		// Read exactly, as a decimal: the amount is money.
		raw := sub.Raw("amount")
		d, err := decimal.NewFromString(string(raw))
		if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || err != nil {
			sub.Fail("amount", "invalid_type", "must be a number")
		} else {
			r.Amount = &d
		}
	}
	if cur := sub.Text("currency", false, 3); cur != nil {
		r.Currency = *cur
	}
	r.DecideBy = sub.Date("decide_by")
	if rec := sub.Text("recommendation", false, MaxRecommendationLen); rec != nil {
		r.Recommendation = *rec
	}
	for _, k := range sub.Unknown() {
		sub.Fail(truncate(k, 100), "unknown_field", "is not a field of a decision request")
	}
	b.Adopt("decision_request.", sub)
	return &r
}

// readContent reads `content`: an object of section → {title, body} (both
// optional strings). In a PATCH a section set to null removes its text.
func readContent(b *input.Object, nullRemoves bool) map[Section]*Part {
	if !b.Has("content") || b.IsNull("content") {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b.Raw("content"), &raw); err != nil {
		b.Fail("content", validation.CodeInvalidValue, "must be an object of section → {title, body}")
		return nil
	}
	out := map[Section]*Part{}
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		field := "content." + truncate(key, 100)
		if string(raw[key]) == "null" {
			if !nullRemoves {
				b.Fail(field, "invalid_type", "must be an object {title, body}")
				continue
			}
			out[Section(key)] = nil
			continue
		}
		var part map[string]json.RawMessage
		if err := json.Unmarshal(raw[key], &part); err != nil {
			b.Fail(field, "invalid_type", "must be an object {title, body}")
			continue
		}
		var p Part
		for _, k := range slices.Sorted(maps.Keys(part)) {
			var dst *string
			switch k {
			case "title":
				dst = &p.Title
			case "body":
				dst = &p.Body
			default:
				b.Fail(field+"."+truncate(k, 100), "unknown_field", "a section has title and body only")
				continue
			}
			if string(part[k]) == "null" {
				continue
			}
			if err := json.Unmarshal(part[k], dst); err != nil {
				b.Fail(field+"."+k, "invalid_type", "must be a string")
			}
		}
		out[Section(key)] = &p
	}
	return out
}

// Over lays the sent fields over a definition (create and PUT start from
// nothing). PATCH merges content per section; the text of a section no
// longer listed is dropped.
func (f Body) Over(base Definition, full bool) Definition {
	d := Definition{Name: base.Name, Template: base.Template, Sections: base.Sections, Content: Content{}}
	if !full {
		maps.Copy(d.Content, base.Content)
	}
	if f.Name != nil {
		d.Name = *f.Name
	}
	if f.Template != nil {
		d.Template = Template(*f.Template)
	}
	if f.Sections != nil {
		d.Sections = nil
		for _, s := range f.Sections {
			d.Sections = append(d.Sections, Section(s))
		}
	}
	for s := range d.Content { // stored text of sections no longer listed
		if !slices.Contains(d.Sections, s) {
			delete(d.Content, s)
		}
	}
	for s, p := range f.Content {
		if p == nil {
			delete(d.Content, s)
		} else {
			d.Content[s] = *p
		}
	}
	d.DecisionRequest = base.DecisionRequest
	if full || f.Has["decision_request"] {
		d.DecisionRequest = f.DecisionRequest
	}
	return d
}

// DefinitionOf is a stored case in the rules' terms.
func DefinitionOf(b dbsqlc.BusinessCase) Definition {
	d := Definition{Name: b.Name, Template: Template(b.Template), Content: Content{}}
	for _, s := range b.Sections {
		d.Sections = append(d.Sections, Section(s))
	}
	_ = json.Unmarshal(b.Content, &d.Content)                     // written by the operations only, always an object
	d.DecisionRequest, _ = ReadDecisionRequest(b.DecisionRequest) // likewise
	return d
}

// DecisionBody is an approve or reject body as sent.
type DecisionBody struct{ level, notes *string }

// ReadDecision reads an approve or reject body's types and lengths (the
// caller ends with b.Done, then Check applies the rules).
func ReadDecision(b *input.Object) DecisionBody {
	return DecisionBody{level: b.Text("approval_level", false, maxShortTextLen), notes: b.Text("notes", false, MaxNotesLen)}
}

// Decision is an approval or a rejection, checked.
type Decision struct {
	Level *Level
	Notes *string // nil: none
}

// Check is CheckDecision of the body: an approval needs a level, a rejection notes.
func (d DecisionBody) Check(approving bool) (Decision, error) {
	level, err := CheckDecision(d.level, d.notes, approving)
	return Decision{Level: level, Notes: input.NoneIfBlank(d.notes)}, err
}

// View is the business case resource.
type View struct {
	ID                string               `json:"id"`
	InitiativeID      string               `json:"initiative_id"`
	Name              string               `json:"name"`
	Template          string               `json:"template"`
	Sections          []string             `json:"sections"`
	Content           Content              `json:"content"`
	DecisionRequest   *DecisionRequestView `json:"decision_request"`
	Status            string               `json:"status"`
	Version           int32                `json:"version"`
	PreviousVersionID *string              `json:"previous_version_id"`
	SubmittedAt       *string              `json:"submitted_at"`
	SubmittedBy       *string              `json:"submitted_by"`
	Approval          *ApprovalView        `json:"approval"`
	Snapshot          *Snapshot            `json:"snapshot"`
	ApprovalRound     *RoundView           `json:"approval_round,omitempty"` // single GET only
	CreatedBy         string               `json:"created_by"`
	CreatedAt         string               `json:"created_at"`
	UpdatedAt         string               `json:"updated_at"`
}

// DecisionRequestView is what the case asks its approvers to decide; the
// amount in the currency's minor units.
type DecisionRequestView struct {
	Ask            string   `json:"ask"`
	Amount         *float64 `json:"amount"`
	Currency       *string  `json:"currency"`
	DecideBy       *string  `json:"decide_by"`
	Recommendation *string  `json:"recommendation"`
}

func decisionRequestView(r *DecisionRequest) *DecisionRequestView {
	if r == nil {
		return nil
	}
	out := &DecisionRequestView{Ask: r.Ask}
	if r.Amount != nil {
		out.Amount, out.Currency = new(money.Amount(*r.Amount, r.Currency)), new(r.Currency)
	}
	if r.DecideBy != nil {
		out.DecideBy = new(r.DecideBy.Format(time.DateOnly))
	}
	if r.Recommendation != "" {
		out.Recommendation = new(r.Recommendation)
	}
	return out
}

// ApprovalView is the latest decision on a case.
type ApprovalView struct {
	Decision string  `json:"decision"`
	Level    *string `json:"level"`
	Notes    *string `json:"notes"`
	By       string  `json:"by"`
	At       string  `json:"at"`
}

// RoundView is the latest approval round the workflow keeps.
type RoundView struct {
	WorkflowID     string  `json:"workflow_id"`
	StartedAt      string  `json:"started_at"`
	RemindersSent  int32   `json:"reminders_sent"`
	LastReminderAt *string `json:"last_reminder_at"`
	EscalatedAt    *string `json:"escalated_at"`
	DecidedAt      *string `json:"decided_at"`
	Decision       *string `json:"decision"`
}

// ViewOf is the resource of a stored case.
func ViewOf(b dbsqlc.BusinessCase) View {
	def := DefinitionOf(b)
	out := View{
		ID: b.ID.String(), InitiativeID: b.InitiativeID.String(), Name: b.Name, Template: b.Template,
		Sections: b.Sections, Content: Content{}, Status: b.Status, Version: b.Version,
		SubmittedAt: optTimestamp(b.SubmittedAt), SubmittedBy: b.SubmittedBy,
		CreatedBy: b.CreatedBy, CreatedAt: wire.Timestamp(b.CreatedAt), UpdatedAt: wire.Timestamp(b.UpdatedAt),
	}
	for _, s := range def.Sections { // every listed section, empty until written
		out.Content[s] = def.Content[s]
	}
	out.DecisionRequest = decisionRequestView(def.DecisionRequest)
	if b.PreviousVersionID != nil {
		out.PreviousVersionID = new(b.PreviousVersionID.String())
	}
	if b.Decision != nil && b.DecidedBy != nil && b.DecidedAt != nil {
		out.Approval = &ApprovalView{Decision: *b.Decision, Level: b.ApprovalLevel, Notes: b.DecisionNotes, By: *b.DecidedBy, At: wire.Timestamp(*b.DecidedAt)}
	}
	if b.Snapshot != nil {
		if snap, err := ReadSnapshot(b.Snapshot); err == nil {
			out.Snapshot = &snap
		}
	}
	return out
}

// RoundViewOf is the resource of an approval round.
func RoundViewOf(r dbsqlc.BusinessCaseApprovalRound) RoundView {
	return RoundView{WorkflowID: r.WorkflowID, StartedAt: wire.Timestamp(r.StartedAt), RemindersSent: r.RemindersSent,
		LastReminderAt: optTimestamp(r.LastReminderAt), EscalatedAt: optTimestamp(r.EscalatedAt), DecidedAt: optTimestamp(r.DecidedAt), Decision: r.Decision}
}

func optTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	return new(wire.Timestamp(*t))
}
