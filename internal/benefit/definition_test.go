package benefit

import (
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/validation"
)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// valid is a definition that passes; each case changes one thing.
func valid() Definition {
	return Definition{
		Category: CostSavings, Frequency: Monthly, Unit: UnitCurrency, Status: Active,
		Currency: "EUR", ExpectedValue: 120000, Start: date(2026, 3, 15),
	}
}

func TestCheckDefinition(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Definition)
		want   map[string]string // field → code; empty = accepted
	}{
		{"valid", func(*Definition) {}, nil},
		{"negative expected value (a benefit that shrinks something)", func(d *Definition) { d.ExpectedValue = -5 }, nil},
		{"largest value", func(d *Definition) { d.ExpectedValue = -MaxAbsValue }, nil},
		{"value too large", func(d *Definition) { d.ExpectedValue = 1e12 + 1 }, map[string]string{"expected_value": validation.CodeOutOfRange}},
		{"NaN", func(d *Definition) { d.ExpectedValue = math.NaN() }, map[string]string{"expected_value": validation.CodeOutOfRange}},
		{"infinite", func(d *Definition) { d.ExpectedValue = math.Inf(-1) }, map[string]string{"expected_value": validation.CodeOutOfRange}},
		{"unit currency without currency", func(d *Definition) { d.Currency = "" }, map[string]string{"currency": validation.CodeRequired}},
		{"withdrawn currency", func(d *Definition) { d.Currency = "DEM" }, map[string]string{"currency": validation.CodeInvalidValue}},
		{"lower-case currency", func(d *Definition) { d.Currency = "eur" }, map[string]string{"currency": validation.CodeInvalidValue}},
		{"hours with a currency", func(d *Definition) { d.Unit = UnitHours }, map[string]string{"currency": validation.CodeNotAllowed}},
		{"hours without currency", func(d *Definition) { d.Unit, d.Currency = UnitHours, "" }, nil},
		{"missing category", func(d *Definition) { d.Category = "" }, map[string]string{"category": validation.CodeRequired}},
		{"unknown category", func(d *Definition) { d.Category = "synergies" }, map[string]string{"category": validation.CodeInvalidValue}},
		{"unknown frequency", func(d *Definition) { d.Frequency = "weekly" }, map[string]string{"measurement_frequency": validation.CodeInvalidValue}},
		{"unknown unit and a currency: only the unit is reported", func(d *Definition) { d.Unit = "widgets" }, map[string]string{"unit": validation.CodeInvalidValue}},
		{"unknown status", func(d *Definition) { d.Status = "done" }, map[string]string{"status": validation.CodeInvalidValue}},
		{"no start date", func(d *Definition) { d.Start = time.Time{} }, map[string]string{"expected_start_date": validation.CodeRequired}},
		{"end before start", func(d *Definition) { d.End = new(date(2026, 3, 14)) }, map[string]string{"expected_end_date": validation.CodeInvalidRange}},
		{"end on the start day", func(d *Definition) { d.End = new(date(2026, 3, 15)) }, nil},
		{"start in year 26 (a typing error)", func(d *Definition) { d.Start = date(26, 3, 15) }, map[string]string{"expected_start_date": validation.CodeOutOfRange}},
		{"end after 2099", func(d *Definition) { d.End = new(date(2100, 1, 1)) }, map[string]string{"expected_end_date": validation.CodeOutOfRange}},
		{"first and last days allowed", func(d *Definition) { d.Start, d.End = date(2000, 1, 1), new(date(2099, 12, 31)) }, nil},
		{"several faults reported together", func(d *Definition) { d.Category, d.Currency, d.ExpectedValue = "x", "", math.NaN() },
			map[string]string{"category": validation.CodeInvalidValue, "currency": validation.CodeRequired, "expected_value": validation.CodeOutOfRange}},
	}
	for _, c := range cases {
		d := valid()
		c.change(&d)
		_, err := CheckDefinition(d)
		got := fieldCodes(t, err)
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCheckPlan(t *testing.T) {
	quarterly := func(plan ...PlanEntry) Definition {
		d := valid()
		d.Frequency, d.Start, d.End, d.Plan = Quarterly, date(2026, 2, 10), new(date(2027, 8, 31)), plan
		return d
	}
	monthly := func(plan ...PlanEntry) Definition {
		d := valid()
		d.Start, d.Plan = date(2026, 3, 15), plan // open-ended
		return d
	}
	cases := []struct {
		name string
		d    Definition
		want map[string]string
	}{
		{"quarterly, first months, start's quarter included", quarterly(PlanEntry{"2026-01", 10}, PlanEntry{"2027-07", 20}), nil},
		{"quarterly, a mid-quarter month is off the grid", quarterly(PlanEntry{"2026-05", 10}), map[string]string{"plan[0].period": validation.CodeOffGrid}},
		{"quarterly, a quarter before the start's", quarterly(PlanEntry{"2025-10", 10}), map[string]string{"plan[0].period": validation.CodeOutOfRange}},
		{"quarterly, a quarter after the end's", quarterly(PlanEntry{"2027-10", 10}), map[string]string{"plan[0].period": validation.CodeOutOfRange}},
		{"monthly, the start month", monthly(PlanEntry{"2026-03", 1}), nil},
		{"monthly, before the start month", monthly(PlanEntry{"2026-02", 1}), map[string]string{"plan[0].period": validation.CodeOutOfRange}},
		{"monthly, open-ended accepts far periods", monthly(PlanEntry{"2035-12", 1}), nil},
		{"duplicate period", monthly(PlanEntry{"2026-04", 1}, PlanEntry{"2026-05", 1}, PlanEntry{"2026-04", 2}), map[string]string{"plan[2].period": validation.CodeDuplicate}},
		{"malformed period", monthly(PlanEntry{"2026-13", 1}), map[string]string{"plan[0].period": validation.CodeInvalidFormat}},
		{"non-finite expected", monthly(PlanEntry{"2026-04", math.Inf(1)}), map[string]string{"plan[0].expected": validation.CodeOutOfRange}},
		{"expected too large", monthly(PlanEntry{"2026-04", -2e12}), map[string]string{"plan[0].expected": validation.CodeOutOfRange}},
	}
	for _, c := range cases {
		_, err := CheckDefinition(c.d)
		got := fieldCodes(t, err)
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPlanLimit(t *testing.T) {
	d := valid()
	for i := range MaxPlanEntries + 1 {
		d.Plan = append(d.Plan, PlanEntry{mi(2026, 3).Add(i).String(), 1})
	}
	if got := fieldCodes(t, errOf(CheckDefinition(d))); got["plan"] != validation.CodeTooMany {
		t.Errorf("121 entries: got %v", got)
	}
	d.Plan = d.Plan[:MaxPlanEntries]
	if _, err := CheckDefinition(d); err != nil {
		t.Errorf("120 entries must pass: %v", err)
	}
}

func TestCheckedPlanIsSortedAndEmptyMeansNone(t *testing.T) {
	d := valid()
	d.Plan = []PlanEntry{{"2026-06", 3}, {"2026-04", 1}, {"2026-05", 2}}
	plan, err := CheckDefinition(d)
	want := []PlannedPeriod{{mi(2026, 4), 1}, {mi(2026, 5), 2}, {mi(2026, 6), 3}}
	if err != nil || !slices.Equal(plan, want) {
		t.Fatalf("got %v, %v; want %v", plan, err, want)
	}
	d.Plan = []PlanEntry{}
	if plan, err := CheckDefinition(d); err != nil || plan != nil {
		t.Errorf("an empty plan must mean no plan, got %v, %v", plan, err)
	}
}

func errOf[T any](_ T, err error) error { return err }
