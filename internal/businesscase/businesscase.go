// Package businesscase holds the rules of business cases (spec
// sections 2, 3, 8 and 9): templates, sections and approval levels, the
// states and their transitions, what blocks an approval (Validate), the
// limits, and the figures frozen at approval (Figures). No HTTP: handlers map
// validation.Errors to 422 and the Err* values to 409.
package businesscase

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/valuecase/valuecase/internal/validation"
)

// Template shapes a case (and its exports).
type Template string

const (
	ExecutiveSummaryTemplate Template = "executive_summary"
	CFOView                  Template = "cfo_view"
	TechnicalDeepDive        Template = "technical_deep_dive"
	BoardPresentation        Template = "board_presentation"
)

// Templates lists every template (spec section 2).
var Templates = []Template{ExecutiveSummaryTemplate, CFOView, TechnicalDeepDive, BoardPresentation}

// Section identifies one part of a case.
type Section string

const (
	ExecutiveSummary      Section = "executive_summary"
	FinancialAnalysis     Section = "financial_analysis"
	RiskAssessment        Section = "risk_assessment"
	ImplementationRoadmap Section = "implementation_roadmap"
	StakeholderMap        Section = "stakeholder_map"
	BenefitsPlan          Section = "benefits_plan"
	Assumptions           Section = "assumptions"
)

// Sections lists every section: the spec's four, then ours.
var Sections = []Section{ExecutiveSummary, FinancialAnalysis, RiskAssessment, ImplementationRoadmap, StakeholderMap, BenefitsPlan, Assumptions}

// RequiredSections are the sections a case of a template must list (and
// fill) before it can be approved: every template needs the summary and the
// financial analysis; the others add what their audience reads.
func RequiredSections(t Template) []Section {
	base := []Section{ExecutiveSummary, FinancialAnalysis}
	switch t {
	case CFOView:
		return append(base, RiskAssessment)
	case TechnicalDeepDive:
		return append(base, RiskAssessment, ImplementationRoadmap)
	case BoardPresentation:
		return append(base, RiskAssessment, ImplementationRoadmap)
	}
	return base
}

// Level is who approved a case, by seniority.
type Level string

const (
	Manager   Level = "manager"
	Director  Level = "director"
	Executive Level = "executive"
	Board     Level = "board"
)

// Levels lists every approval level, lowest first.
var Levels = []Level{Manager, Director, Executive, Board}

// Status is the state of a case.
type Status string

const (
	Draft           Status = "draft"
	PendingApproval Status = "pending_approval"
	Approved        Status = "approved"
	Rejected        Status = "rejected"
)

// Statuses lists every state.
var Statuses = []Status{Draft, PendingApproval, Approved, Rejected}

// Editable reports whether a case in s may change: every state but approved
// (approval locks a case; a revision is a new version).
func (s Status) Editable() bool { return s != Approved }

// Limits (spec section 8 and ours).
const (
	MaxPerInitiative = 50    // business cases of one initiative, every version counted
	MaxNameLen       = 200   // like an initiative's name
	MaxTitleLen      = 200   // a section's title
	MaxBodyLen       = 20000 // a section's body text
	MaxNotesLen      = 2000  // approval and rejection notes
)

// Errors the API answers with 409: the request is well formed, but the
// state of the case or its initiative does not allow it.
var (
	ErrLimitReached       = fmt.Errorf("the initiative already has the maximum of %d business cases", MaxPerInitiative)
	ErrInitiativeArchived = errors.New("the initiative is archived; no business case can be created or changed for it")
	ErrLocked             = errors.New("the business case is approved and locked; revise it by creating a new version (POST /v1/business-cases/{id}/versions)")
	ErrAlreadyApproved    = errors.New("the business case is already approved")
	ErrAlreadyPending     = errors.New("the business case is already pending approval")
	ErrNotPending         = errors.New("only a business case pending approval can be rejected; submit it first")
)

// CheckCanAdd reports whether an initiative that has count cases may get another.
func CheckCanAdd(count int64) error {
	if count >= MaxPerInitiative {
		return ErrLimitReached
	}
	return nil
}

// CheckInitiativeWritable refuses new cases (and versions) of an archived initiative.
func CheckInitiativeWritable(initiativeArchived bool) error {
	if initiativeArchived {
		return ErrInitiativeArchived
	}
	return nil
}

// CheckEditable is the rule of PUT, PATCH and DELETE: an approved case is locked.
func CheckEditable(s Status) error {
	if !s.Editable() {
		return ErrLocked
	}
	return nil
}

// CheckSubmit: draft or rejected → pending_approval.
func CheckSubmit(s Status) error {
	switch s {
	case Draft, Rejected:
		return nil
	case PendingApproval:
		return ErrAlreadyPending
	}
	return ErrAlreadyApproved
}

// CheckApprove: from any editable state, when nothing blocks it (problems
// from Validate); the error names every problem.
func CheckApprove(s Status, problems []Problem) error {
	if s == Approved {
		return ErrAlreadyApproved
	}
	if len(problems) > 0 {
		return &BlockedError{Problems: problems}
	}
	return nil
}

// CheckReject: pending_approval → rejected (editable again).
func CheckReject(s Status) error {
	switch s {
	case PendingApproval:
		return nil
	case Approved:
		return ErrAlreadyApproved
	}
	return ErrNotPending
}

// BlockedError is an approval refused because the case is incomplete.
type BlockedError struct{ Problems []Problem }

func (e *BlockedError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Message
	}
	return "the business case cannot be approved: " + strings.Join(msgs, "; ")
}

// Part is the text of one section.
type Part struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// Content is the text of a case, by section.
type Content map[Section]Part

// Definition is a case as the client gave it (after the handler merged a
// PATCH into the stored record).
type Definition struct {
	Name            string
	Template        Template
	Sections        []Section
	Content         Content
	DecisionRequest *DecisionRequest // nil: none asked yet
}

// CheckDefinition reports every rule d breaks, as validation.Errors:
//   - name 1–200 characters; template one of Templates;
//   - sections a non-empty list of Sections, each once;
//   - content only for listed sections; title up to 200 characters (one
//     line), body up to 20,000 (line breaks allowed), no control characters;
//   - the decision request's rules (checkDecisionRequest).
func CheckDefinition(d Definition) error {
	var errs validation.Errors
	if n := utf8.RuneCountInString(strings.TrimSpace(d.Name)); n == 0 {
		errs.Add("name", validation.CodeRequired, "must not be blank")
	} else if n > MaxNameLen {
		errs.Add("name", validation.CodeTooLong, "must be at most %d characters", MaxNameLen)
	}
	if !slices.Contains(Templates, d.Template) {
		errs.Add("template", codeFor(string(d.Template)), "must be one of %s", names(Templates))
	}
	if len(d.Sections) == 0 {
		errs.Add("sections", validation.CodeRequired, "must list at least one section")
	}
	for i, s := range d.Sections {
		field := fmt.Sprintf("sections[%d]", i)
		switch {
		case !slices.Contains(Sections, s):
			errs.Add(field, validation.CodeInvalidValue, "is not a known section; one of %s", names(Sections))
		case slices.Index(d.Sections, s) < i:
			errs.Add(field, validation.CodeDuplicate, "section %s is listed twice", s)
		}
	}
	for _, s := range slices.Sorted(maps.Keys(d.Content)) {
		p := d.Content[s]
		field := "content." + string(s)
		if !slices.Contains(d.Sections, s) {
			code := validation.CodeNotAllowed
			if !slices.Contains(Sections, s) {
				code = validation.CodeInvalidValue
			}
			errs.Add(field, code, "content is only kept for the sections the case lists")
			continue
		}
		checkText(&errs, field+".title", p.Title, MaxTitleLen, false)
		checkText(&errs, field+".body", p.Body, MaxBodyLen, true)
	}
	checkDecisionRequest(&errs, d.DecisionRequest)
	return errs.Err()
}

// CheckDecision reads an approval or rejection: level one of Levels
// (required to approve), notes up to 2,000 characters (required to reject).
func CheckDecision(level *string, notes *string, approving bool) (*Level, error) {
	var errs validation.Errors
	var out *Level
	switch {
	case level == nil && approving:
		errs.Add("approval_level", validation.CodeRequired, "is required: one of %s", names(Levels))
	case level != nil && !slices.Contains(Levels, Level(*level)):
		errs.Add("approval_level", validation.CodeInvalidValue, "must be one of %s", names(Levels))
	case level != nil:
		out = new(Level(*level))
	}
	if notes == nil || strings.TrimSpace(*notes) == "" {
		if !approving {
			errs.Add("notes", validation.CodeRequired, "a rejection says why: notes are required")
		}
	} else if utf8.RuneCountInString(*notes) > MaxNotesLen {
		errs.Add("notes", validation.CodeTooLong, "must be at most %d characters", MaxNotesLen)
	}
	return out, errs.Err()
}

// checkText checks a text field: at most max characters, then the text rule
// (validation.Text: no NUL or control characters; line breaks when multiline).
func checkText(errs *validation.Errors, field, v string, max int, multiline bool) {
	if utf8.RuneCountInString(v) > max {
		errs.Add(field, validation.CodeTooLong, "must be at most %d characters", max)
		return
	}
	errs.Append(validation.Text(field, v, multiline))
}

func codeFor(s string) string {
	if s == "" {
		return validation.CodeRequired
	}
	return validation.CodeInvalidValue
}

func names[T ~string](values []T) string { return strings.Join(validation.Names(values), ", ") }

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
