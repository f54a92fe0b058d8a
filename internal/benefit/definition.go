package benefit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/validation"
)

// Definition is everything about a benefit that the rules look at, as the
// client gave it (after the handler merged a PATCH into the stored record).
type Definition struct {
	Category      Category
	Frequency     Frequency
	Unit          Unit
	Status        Status
	Currency      string // "" when none
	ExpectedValue float64
	Start         time.Time  // expected_start_date; required
	End           *time.Time // expected_end_date; nil = open-ended
	Plan          []PlanEntry
}

// PlanEntry is one element of `plan` as submitted.
type PlanEntry struct {
	Period   string // YYYY-MM
	Expected float64
}

// PlannedPeriod is a checked plan entry.
type PlannedPeriod struct {
	Period   finance.Month // on the benefit's frequency grid
	Expected float64
}

// CheckDefinition reports every rule d breaks, as validation.Errors, and
// returns the plan checked and sorted by period. An empty plan is the same as
// none (nil): "expect zero everywhere" is never what an empty list means.
func CheckDefinition(d Definition) ([]PlannedPeriod, error) {
	var errs validation.Errors
	if !d.Category.Valid() {
		errs.Add("category", codeFor(d.Category), "must be one of %s", oneOf(Categories))
	}
	if !d.Frequency.Valid() {
		errs.Add("measurement_frequency", codeFor(d.Frequency), "must be one of %s", oneOf(Frequencies))
	}
	if !d.Unit.Valid() {
		errs.Add("unit", codeFor(d.Unit), "must be one of %s", oneOf(Units))
	}
	if !d.Status.Valid() {
		errs.Add("status", codeFor(d.Status), "must be one of %s", oneOf(Statuses))
	}
	switch {
	case d.Unit == UnitCurrency:
		errs.Append(money.CheckCode("currency", d.Currency))
	case d.Currency != "" && d.Unit.Valid():
		errs.Add("currency", validation.CodeNotAllowed, "is only allowed when unit is currency")
	}
	errs.Append(CheckValue("expected_value", d.ExpectedValue))

	datesOK := true
	inRange := func(t time.Time) bool { return finance.InputPeriods.Contains(finance.MonthOfTime(t)) }
	switch {
	case d.Start.IsZero():
		errs.Add("expected_start_date", validation.CodeRequired, "is required")
		datesOK = false
	case !inRange(d.Start):
		errs.Add("expected_start_date", validation.CodeOutOfRange, "must be from 2000-01-01 to 2099-12-31")
		datesOK = false
	}
	if d.End != nil && !inRange(*d.End) {
		errs.Add("expected_end_date", validation.CodeOutOfRange, "must be from 2000-01-01 to 2099-12-31")
		datesOK = false
	}
	if datesOK && d.End != nil && d.End.Before(d.Start) {
		errs.Add("expected_end_date", validation.CodeInvalidRange, "must not be before expected_start_date")
		datesOK = false
	}
	var plan []PlannedPeriod
	if len(d.Plan) > 0 {
		// Where plan periods may fall depends on the frequency and the dates; without them only the values are checked.
		plan = checkPlan(d, datesOK && d.Frequency.Valid(), &errs)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return plan, nil
}

func checkPlan(d Definition, checkPlacement bool, errs *validation.Errors) []PlannedPeriod {
	if len(d.Plan) > MaxPlanEntries {
		errs.Add("plan", validation.CodeTooMany, "must have at most %d entries (got %d)", MaxPlanEntries, len(d.Plan))
		return nil
	}
	first, last := finance.Month(math.MinInt), finance.Month(math.MaxInt)
	if checkPlacement {
		first = Normalise(d.Frequency, finance.MonthOfTime(d.Start))
		if d.End != nil {
			last = Normalise(d.Frequency, finance.MonthOfTime(*d.End))
		}
	}
	seen := map[finance.Month]int{} // period → index of the entry that has it
	plan := make([]PlannedPeriod, 0, len(d.Plan))
	for i, e := range d.Plan {
		field := fmt.Sprintf("plan[%d]", i)
		errs.Append(CheckValue(field+".expected", e.Expected))
		p, ok := parsePeriod(e.Period)
		switch {
		case !ok:
			errs.Add(field+".period", validation.CodeInvalidFormat, "must be a period YYYY-MM")
			continue
		case !checkPlacement:
		case !OnGrid(d.Frequency, p):
			errs.Add(field+".period", validation.CodeOffGrid, "%s is not a quarter: quarterly plans use the quarter's first month (%s)", e.Period, Normalise(d.Frequency, p))
			continue
		case p < first || p > last:
			errs.Add(field+".period", validation.CodeOutOfRange, "%s is outside the benefit's expected start and end dates", e.Period)
			continue
		}
		if j, dup := seen[p]; dup {
			errs.Add(field+".period", validation.CodeDuplicate, "%s is already planned by plan[%d]", e.Period, j)
			continue
		}
		seen[p] = i
		plan = append(plan, PlannedPeriod{Period: p, Expected: e.Expected})
	}
	slices.SortFunc(plan, func(a, b PlannedPeriod) int { return cmp.Compare(a.Period, b.Period) })
	return plan
}

// CheckValue reports what is wrong with an amount given for field: it must be
// a finite number no larger than MaxAbsValue either way (a *validation.Error).
func CheckValue(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > MaxAbsValue {
		return validation.New(field, validation.CodeOutOfRange, "must be a finite number between -1e12 and 1e12")
	}
	return nil
}

// codeFor separates a missing enum value (required) from a wrong one.
func codeFor[T ~string](v T) string {
	if v == "" {
		return validation.CodeRequired
	}
	return validation.CodeInvalidValue
}

// oneOf writes allowed values the way the API's enum messages do: a, b, c.
func oneOf[T ~string](values []T) string { return strings.Join(validation.Names(values), ", ") }
