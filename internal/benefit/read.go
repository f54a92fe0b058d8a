package benefit

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
)

// How long the texts of a benefit or an actual may be (the API's limits on
// the same kinds of field).
const (
	maxNameLen        = 200
	maxDescriptionLen = 10_000
	maxShortTextLen   = 100
	maxOwnerLen       = 255
	maxExternalKeyLen = 100 // benefits.external_key (migration 00011)
)

// Fields are the writable fields of a benefit as sent: the body of create,
// PUT and PATCH, and a row of a benefits import. Has tells which the body
// carried (PATCH changes only those).
type Fields struct {
	InitiativeID, Name, Description, Category, Currency, Unit, Frequency, Status, OwnerID *string
	ExternalKey                                                                           *string
	ExpectedValue                                                                         *float64
	Start, End                                                                            *time.Time
	Plan                                                                                  []PlanEntry
	Has                                                                                   map[string]bool
}

var writableFields = []string{"name", "description", "category", "expected_value", "currency", "unit",
	"measurement_frequency", "expected_start_date", "expected_end_date", "status", "owner_id", "plan", "external_key"}

// ReadFields reads the fields of a benefit body (the route's or an import
// row's); failures stay in b until b.Done. full (create, PUT) needs name,
// category, expected_value, unit, measurement_frequency and
// expected_start_date; create also needs initiative_id.
func ReadFields(b *input.Object, full, create bool) Fields {
	f := Fields{Has: map[string]bool{}}
	for _, name := range writableFields {
		f.Has[name] = b.Has(name)
	}
	need := func(field string) bool { return full || f.Has[field] }
	f.InitiativeID = b.Text("initiative_id", create, maxShortTextLen)
	f.Name = input.Trimmed(b.Text("name", need("name"), maxNameLen))
	f.Description = b.Text("description", false, maxDescriptionLen)
	f.Category = b.Text("category", need("category"), maxShortTextLen)
	f.ExpectedValue = b.Number("expected_value", need("expected_value"))
	f.Currency = b.Text("currency", false, maxShortTextLen)
	f.Unit = b.Text("unit", need("unit"), maxShortTextLen)
	f.Frequency = b.Text("measurement_frequency", need("measurement_frequency"), maxShortTextLen)
	f.Start = b.Date("expected_start_date")
	if need("expected_start_date") && f.Start == nil && (!b.Has("expected_start_date") || b.IsNull("expected_start_date")) {
		b.Fail("expected_start_date", "required", "is required")
	}
	f.End = b.Date("expected_end_date")
	f.Status = b.Text("status", !full && f.Has["status"], maxShortTextLen) // null in a full body: kept (PUT) or active (create)
	f.OwnerID = input.NoneIfBlank(b.Text("owner_id", false, maxOwnerLen))
	f.Plan = readPlan(b)
	f.ExternalKey = input.Trimmed(b.Text("external_key", false, maxExternalKeyLen))
	if f.ExternalKey != nil && *f.ExternalKey == "" {
		f.ExternalKey = nil
	}
	b.Ignore("id", "created_at", "updated_at")
	return f
}

// readPlan reads `plan`: null or absent is no plan, else an array of
// {period, expected} objects.
func readPlan(b *input.Object) []PlanEntry {
	if !b.Has("plan") || b.IsNull("plan") {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b.Raw("plan"), &raw); err != nil {
		b.Fail("plan", "invalid_type", "must be an array of {period, expected} objects")
		return nil
	}
	out := make([]PlanEntry, 0, len(raw))
	for i, r := range raw {
		entry, ok := input.Decode(r)
		if !ok {
			b.Fail(fmt.Sprintf("plan[%d]", i), "invalid_type", "must be an object {period, expected}")
			continue
		}
		period := entry.Text("period", true, maxShortTextLen)
		expected := entry.Number("expected", true)
		_ = entry.Done()
		b.Adopt(fmt.Sprintf("plan[%d].", i), entry)
		if period != nil && expected != nil {
			out = append(out, PlanEntry{Period: *period, Expected: *expected})
		}
	}
	return out
}

// Definition lays the sent fields over a base: the stored benefit for PATCH,
// nothing for create and PUT (which keep only the stored status and owner).
func (f Fields) Definition(base dbsqlc.Benefit, basePlan []dbsqlc.BenefitPlanEntry, full bool) Definition {
	d := Definition{
		Category: Category(base.Category), Frequency: Frequency(base.MeasurementFrequency),
		Unit: Unit(base.Unit), Status: Status(base.Status), Currency: deref(base.Currency),
		ExpectedValue: money.Stored(base.ExpectedValue), Start: base.ExpectedStartDate, End: base.ExpectedEndDate,
	}
	for _, e := range basePlan {
		d.Plan = append(d.Plan, PlanEntry{Period: finance.MonthOfTime(e.Period).String(), Expected: money.Stored(e.Expected)})
	}
	if full {
		d.Currency, d.End, d.Plan = "", nil, nil
	}
	if d.Status == "" {
		d.Status = Active
	}
	set := func(p *string, dst *string) {
		if p != nil {
			*dst = *p
		}
	}
	set(f.Category, (*string)(&d.Category))
	set(f.Frequency, (*string)(&d.Frequency))
	set(f.Unit, (*string)(&d.Unit))
	set(f.Status, (*string)(&d.Status))
	if f.Has["currency"] {
		d.Currency = deref(f.Currency)
	}
	if f.ExpectedValue != nil {
		d.ExpectedValue = *f.ExpectedValue
	}
	if f.Start != nil {
		d.Start = *f.Start
	}
	if full || f.Has["expected_end_date"] {
		d.End = f.End
	}
	if full || f.Has["plan"] {
		d.Plan = f.Plan
	}
	return d
}

// ActualFields are an actual as sent: the body of POST
// /v1/benefits/{id}/actuals, and a row of an actuals import (which adds
// benefit_id, read by the importer).
type ActualFields struct {
	Value           *float64
	Period          *string
	Notes, Evidence *string
}

// ReadActual reads the fields of an actual; b.Done reports what failed.
func ReadActual(b *input.Object) ActualFields {
	return ActualFields{
		Value:    b.Number("value", true),
		Period:   b.Text("period", true, maxShortTextLen),
		Notes:    b.Text("notes", false, maxDescriptionLen),
		Evidence: b.Text("evidence_url", false, MaxEvidenceURLLen+1), // the domain reports too_long
	}
}

// Input is what the fields (read without errors) file for a benefit: a
// person's filing always sets the notes ("" when none was sent).
func (f ActualFields) Input(benefitID uuid.UUID) ActualInput {
	return ActualInput{BenefitID: benefitID, Period: *f.Period, Value: money.FromInput(*f.Value),
		Notes: new(deref(f.Notes)), EvidenceURL: f.Evidence}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
