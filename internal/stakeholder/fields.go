package stakeholder

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/validation"
)

// MaxEngagementsPerStakeholder bounds the engagement log of one stakeholder
// (the spec is silent): years of weekly meetings fit many times over.
const MaxEngagementsPerStakeholder = 10_000

// Errors the API answers with 409: the request is well formed, but the state
// of the initiative or stakeholder does not allow it.
var (
	ErrInitiativeArchived = fmt.Errorf("%w: its stakeholders too", initiative.ErrArchived)
	ErrEngagementLimit    = errors.New("the stakeholder already has the maximum of 10000 engagements")
)

// CheckWritable reports whether the stakeholders of an initiative in this
// status may change (created, edited, deleted, engaged): not once the
// initiative is read-only (initiative.CheckWritable: archived is final).
func CheckWritable(initiativeStatus initiative.Status) error {
	if initiative.CheckWritable(initiativeStatus) != nil {
		return ErrInitiativeArchived
	}
	return nil
}

// CheckCanEngage reports whether a stakeholder with count engagements may get another.
func CheckCanEngage(count int) error {
	if count >= MaxEngagementsPerStakeholder {
		return ErrEngagementLimit
	}
	return nil
}

// Fields are a stakeholder's checked fields as the client gave them (after
// the handler merged a PATCH into the stored record). Role and Department
// nil mean none.
type Fields struct {
	Email            string
	Role, Department *string
	Influence        Influence
	Interest         Interest
}

// Checked is an accepted Fields: role and department trimmed, blank ones
// nil, and the e-mail's duplicate key.
type Checked struct {
	EmailKey         string
	Role, Department *string
}

// CheckFields reports every rule f breaks, as validation.Errors: email a bare
// address (CheckEmail), role and department free text (CheckLabel), influence
// and interest from the spec's lists.
func CheckFields(f Fields) (Checked, error) {
	var errs validation.Errors
	var out Checked
	key, err := CheckEmail("email", f.Email)
	errs.Append(err)
	out.EmailKey = key
	label := func(field string, v *string) *string {
		if v == nil {
			return nil
		}
		s, err := CheckLabel(field, *v)
		errs.Append(err)
		if err != nil || s == "" {
			return nil
		}
		return &s
	}
	out.Role, out.Department = label("role", f.Role), label("department", f.Department)
	if !f.Influence.Valid() {
		errs.Add("influence", codeFor(string(f.Influence)), "must be one of %s", names(Influences))
	}
	if !f.Interest.Valid() {
		errs.Add("interest", codeFor(string(f.Interest)), "must be one of %s", names(Interests))
	}
	if err := errs.Err(); err != nil {
		return Checked{}, err
	}
	return out, nil
}

// EngagementInput is a logged engagement as the client gave it; the date is
// already a calendar date (a malformed date is the handler's 422).
type EngagementInput struct {
	Type      EngagementType
	Sentiment Sentiment
	Date      time.Time
}

// CheckEngagement reports every rule e breaks: type and sentiment from the
// spec's lists, and the date (CheckEngagementDate) against now.
func CheckEngagement(e EngagementInput, now time.Time) error {
	var errs validation.Errors
	if !e.Type.Valid() {
		errs.Add("type", codeFor(string(e.Type)), "must be one of %s", names(EngagementTypes))
	}
	if !e.Sentiment.Valid() {
		errs.Add("sentiment", codeFor(string(e.Sentiment)), "must be one of %s", names(Sentiments))
	}
	errs.Append(CheckEngagementDate(e.Date, now))
	return errs.Err()
}

// codeFor is required for an empty value and invalid_value otherwise.
func codeFor(s string) string {
	if s == "" {
		return validation.CodeRequired
	}
	return validation.CodeInvalidValue
}

func names[T ~string](values []T) string { return strings.Join(validation.Names(values), ", ") }
