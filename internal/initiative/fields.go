package initiative

import (
	"time"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/wire"
)

// Bounds on the free text of an initiative and its projects.
const (
	MaxNameLen        = 200
	MaxDescriptionLen = 10_000
	MaxShortTextLen   = 100
	MaxReasonLen      = 1_000
	MaxOwnerLen       = 255
)

// StatusNames are the statuses as a body sends them.
var StatusNames = validation.Names(Statuses)

// Fields are the writable fields of an initiative as a body (create, PUT,
// PATCH) or an import row sends them.
type Fields struct {
	Name, Description, Industry, Segment, OwnerID, Status *string
	Start, End                                            *time.Time
	// Has tells which fields were sent (PATCH leaves the others alone).
	Has map[string]bool
	// ExternalID is the source's id of a record an integration writes (never read from a body).
	ExternalID string
}

var writableFields = []string{"name", "description", "industry", "segment", "owner_id", "expected_start_date", "expected_end_date", "status"}

// readOnlyFields may be sent back as received from a GET; they are ignored.
var readOnlyFields = []string{"id", "created_at", "updated_at", "projects", "stakeholders", "metrics", "review"}

// Read reads the writable fields from b: the single routes' bodies and the
// import's rows alike (the caller ends with b.Done).
func Read(b *input.Object, nameRequired bool) Fields {
	f := Fields{Has: map[string]bool{}}
	for _, name := range writableFields {
		f.Has[name] = b.Has(name)
	}
	f.Name = input.Trimmed(b.Text("name", nameRequired || f.Has["name"], MaxNameLen))
	f.Description = b.Text("description", false, MaxDescriptionLen)
	f.Industry = input.NoneIfBlank(b.Text("industry", false, MaxShortTextLen))
	f.Segment = input.NoneIfBlank(b.Text("segment", false, MaxShortTextLen))
	f.OwnerID = input.NoneIfBlank(b.Text("owner_id", false, MaxOwnerLen))
	f.Start = b.Date("expected_start_date")
	f.End = b.Date("expected_end_date")
	f.Status = b.Enum("status", false, StatusNames)
	b.Ignore(readOnlyFields...)
	return f
}

// StatusRequest is the body of a status change.
type StatusRequest struct {
	To     Status
	Reason string
}

// ReadStatusRequest reads a status change: status required, reason optional.
func ReadStatusRequest(b *input.Object) StatusRequest {
	var r StatusRequest
	if to := b.Enum("status", true, StatusNames); to != nil {
		r.To = Status(*to)
	}
	if reason := b.Text("reason", false, MaxReasonLen); reason != nil {
		r.Reason = *reason
	}
	return r
}

// ProjectFields are a project's body.
type ProjectFields struct {
	Name, Description string
}

// ReadProject reads a project's body: name required, description optional.
func ReadProject(b *input.Object) ProjectFields {
	var f ProjectFields
	if name := b.Text("name", true, MaxNameLen); name != nil {
		f.Name = *name
	}
	if d := b.Text("description", false, MaxDescriptionLen); d != nil {
		f.Description = *d
	}
	return f
}

// Merge lays the sent fields over the stored initiative: replace (PUT, an
// import row) clears the absent optional fields and keeps an absent status;
// otherwise (PATCH) only the fields sent change and null clears.
func Merge(current dbsqlc.Initiative, f Fields, replace bool) dbsqlc.Initiative {
	next := current
	pick := func(field string, dst **string, v *string) {
		if replace || f.Has[field] {
			*dst = v
		}
	}
	if f.Name != nil {
		next.Name = *f.Name
	}
	if replace || f.Has["description"] {
		next.Description = text(f.Description)
	}
	pick("industry", &next.Industry, f.Industry)
	pick("segment", &next.Segment, f.Segment)
	pick("owner_id", &next.OwnerID, f.OwnerID)
	if replace || f.Has["expected_start_date"] {
		next.ExpectedStartDate = f.Start
	}
	if replace || f.Has["expected_end_date"] {
		next.ExpectedEndDate = f.End
	}
	if f.Status != nil {
		next.Status = *f.Status
	}
	return next
}

// Same reports whether next leaves every writable field of current as it is.
func Same(current, next dbsqlc.Initiative) bool {
	return current.Name == next.Name && current.Description == next.Description && current.Status == next.Status &&
		text(current.Industry) == text(next.Industry) && text(current.Segment) == text(next.Segment) && text(current.OwnerID) == text(next.OwnerID) &&
		db.DateText(current.ExpectedStartDate) == db.DateText(next.ExpectedStartDate) && db.DateText(current.ExpectedEndDate) == db.DateText(next.ExpectedEndDate)
}

// View is the initiative resource as the API shows it and its events carry it.
type View struct {
	ID                string  `json:"id"`
	Name              string  `json:"name"`
	Description       string  `json:"description"`
	Status            string  `json:"status"`
	Industry          *string `json:"industry"`
	Segment           *string `json:"segment"`
	OwnerID           *string `json:"owner_id"`
	ExpectedStartDate *string `json:"expected_start_date"`
	ExpectedEndDate   *string `json:"expected_end_date"`
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
}

// ViewOf is the resource of a stored initiative.
func ViewOf(in dbsqlc.Initiative) View {
	return View{
		ID: in.ID.String(), Name: in.Name, Description: in.Description, Status: in.Status,
		Industry: in.Industry, Segment: in.Segment, OwnerID: in.OwnerID,
		ExpectedStartDate: optDate(in.ExpectedStartDate), ExpectedEndDate: optDate(in.ExpectedEndDate),
		CreatedAt: wire.Timestamp(in.CreatedAt), UpdatedAt: wire.Timestamp(in.UpdatedAt),
	}
}

// ProjectView is the project resource.
type ProjectView struct {
	ID           string `json:"id"`
	InitiativeID string `json:"initiative_id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       string `json:"status"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
}

// ProjectViewOf is the resource of a stored project.
func ProjectViewOf(p dbsqlc.Project) ProjectView {
	return ProjectView{ID: p.ID.String(), InitiativeID: p.InitiativeID.String(), Name: p.Name, Description: p.Description,
		Status: p.Status, CreatedAt: wire.Timestamp(p.CreatedAt), UpdatedAt: wire.Timestamp(p.UpdatedAt)}
}

func optDate(t *time.Time) *string {
	if t == nil {
		return nil
	}
	return new(t.Format(time.DateOnly))
}

func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
