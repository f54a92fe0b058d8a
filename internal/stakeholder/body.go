package stakeholder

import (
	"time"

	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/wire"
)

// Bounds of the free text of a body.
const (
	MaxFreeText       = 1000
	MaxShortTextLen   = 100
	MaxNameLen        = 200
	MaxDescriptionLen = 10_000
)

// Body is a stakeholder as a body (create, PUT, PATCH) or an import row sends it.
type Body struct {
	InitiativeID, Name, Email, Role, Department, Influence, Interest, Notes *string
	Has                                                                     map[string]bool // which fields were sent
}

var writableFields = []string{"initiative_id", "name", "email", "role", "department", "influence", "interest", "notes"}

// readOnlyFields may be sent back as received from a GET; they are ignored.
var readOnlyFields = []string{"id", "quadrant", "engagement_count", "last_engagement_at", "sentiment", "sentiment_trend",
	"at_risk", "at_risk_reason", "created_at", "updated_at"}

// ReadBody reads the fields of a stakeholder body: their JSON types and
// lengths (the rules of the values are CheckFields'). full (PUT) needs
// name, email, influence and interest; create needs initiative_id too;
// PATCH needs nothing, but a required field it sends must not be null. The
// caller ends with b.Done.
func ReadBody(b *input.Object, full, create bool) Body {
	f := Body{Has: map[string]bool{}}
	for _, name := range writableFields {
		f.Has[name] = b.Has(name)
	}
	need := func(field string) bool { return full || f.Has[field] }
	f.InitiativeID = b.Text("initiative_id", create || f.Has["initiative_id"], MaxShortTextLen)
	f.Name = input.Trimmed(b.Text("name", need("name"), MaxNameLen))
	f.Email = b.Text("email", need("email"), MaxEmailLength)
	f.Role = b.Text("role", false, MaxFreeText) // trimmed and bounded by CheckFields
	f.Department = b.Text("department", false, MaxFreeText)
	f.Influence = b.Text("influence", need("influence"), MaxShortTextLen)
	f.Interest = b.Text("interest", need("interest"), MaxShortTextLen)
	f.Notes = b.Text("notes", false, MaxDescriptionLen)
	b.Ignore(readOnlyFields...)
	return f
}

// Merge lays the sent fields over the stored record (full, PUT and create,
// start from no role, department or notes) and checks the result.
func Merge(base dbsqlc.Stakeholder, f Body, full bool) (dbsqlc.Stakeholder, Checked, error) {
	next := base
	if full {
		next.Role, next.Department, next.Notes = nil, nil, ""
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&next.Name, f.Name)
	set(&next.Email, f.Email)
	set(&next.Influence, f.Influence)
	set(&next.Interest, f.Interest)
	if full || f.Has["role"] {
		next.Role = f.Role
	}
	if full || f.Has["department"] {
		next.Department = f.Department
	}
	if full || f.Has["notes"] {
		next.Notes = text(f.Notes)
	}
	checked, err := CheckFields(Fields{Email: next.Email, Role: next.Role, Department: next.Department,
		Influence: Influence(next.Influence), Interest: Interest(next.Interest)})
	next.Role, next.Department = checked.Role, checked.Department
	return next, checked, err
}

// EngagementBody is an engagement as a body or an import row sends it.
type EngagementBody struct {
	EngagementInput
	Notes string
}

// ReadEngagement reads an engagement's fields: type, sentiment and date
// required, notes optional (the caller ends with b.Done).
func ReadEngagement(b *input.Object) EngagementBody {
	var e EngagementBody
	if v := b.Text("type", true, MaxShortTextLen); v != nil {
		e.Type = EngagementType(*v)
	}
	if v := b.Text("sentiment", true, MaxShortTextLen); v != nil {
		e.Sentiment = Sentiment(*v)
	}
	if !b.Has("date") || b.IsNull("date") {
		b.Fail("date", "required", "is required: the calendar date of the engagement, YYYY-MM-DD")
	} else if d := b.Date("date"); d != nil {
		e.Date = *d
	}
	e.Notes = text(b.Text("notes", false, MaxDescriptionLen))
	b.Ignore("id", "stakeholder_id", "recorded_by", "created_at")
	return e
}

// View is the stakeholder resource: the stored fields and what is derived
// from the engagements at the time of the response.
type View struct {
	ID               string  `json:"id"`
	InitiativeID     string  `json:"initiative_id"`
	Name             string  `json:"name"`
	Email            string  `json:"email"`
	Role             *string `json:"role"`
	Department       *string `json:"department"`
	Influence        string  `json:"influence"`
	Interest         string  `json:"interest"`
	Notes            string  `json:"notes"`
	Quadrant         string  `json:"quadrant"`
	EngagementCount  int     `json:"engagement_count"`
	LastEngagementAt *string `json:"last_engagement_at"`
	Sentiment        *string `json:"sentiment"`
	SentimentTrend   string  `json:"sentiment_trend"`
	AtRisk           bool    `json:"at_risk"`
	AtRiskReason     *string `json:"at_risk_reason"`
	CreatedAt        string  `json:"created_at"`
	UpdatedAt        string  `json:"updated_at"`
}

// ViewOf is the resource of a stored stakeholder at now.
func ViewOf(s dbsqlc.Stakeholder, now time.Time) View {
	sum := SummariseStored(Influence(s.Influence), Interest(s.Interest), StoredEngagements(s), s.CreatedAt, now)
	out := View{
		ID: s.ID.String(), InitiativeID: s.InitiativeID.String(), Name: s.Name, Email: s.Email, Role: s.Role, Department: s.Department,
		Influence: s.Influence, Interest: s.Interest, Notes: s.Notes, Quadrant: string(sum.Quadrant), EngagementCount: sum.EngagementCount,
		SentimentTrend: string(sum.SentimentTrend), AtRisk: sum.AtRisk,
		CreatedAt: wire.Timestamp(s.CreatedAt), UpdatedAt: wire.Timestamp(s.UpdatedAt),
	}
	if sum.LastEngagementAt != nil {
		out.LastEngagementAt = new(sum.LastEngagementAt.Format(time.DateOnly))
	}
	if sum.Sentiment != nil {
		out.Sentiment = new(string(*sum.Sentiment))
	}
	if sum.AtRiskReason != nil {
		out.AtRiskReason = new(string(*sum.AtRiskReason))
	}
	return out
}

// EngagementView is one logged engagement.
type EngagementView struct {
	ID            string `json:"id"`
	StakeholderID string `json:"stakeholder_id"`
	Type          string `json:"type"`
	Date          string `json:"date"`
	Sentiment     string `json:"sentiment"`
	Notes         string `json:"notes"`
	RecordedBy    string `json:"recorded_by"`
	CreatedAt     string `json:"created_at"`
}

// EngagementViewOf is the resource of a stored engagement.
func EngagementViewOf(e dbsqlc.StakeholderEngagement) EngagementView {
	return EngagementView{ID: e.ID.String(), StakeholderID: e.StakeholderID.String(), Type: e.Type, Date: e.Date.Format(time.DateOnly),
		Sentiment: e.Sentiment, Notes: e.Notes, RecordedBy: e.RecordedBy, CreatedAt: wire.Timestamp(e.CreatedAt)}
}

// EngagementLogged answers the logging of an engagement and is the data of
// the stakeholder.engagement event: the engagement and the stakeholder after it.
type EngagementLogged struct {
	EngagementView
	Stakeholder View `json:"stakeholder"`
}

func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
