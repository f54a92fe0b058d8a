// Package benefit holds the rules of benefits (spec sections 2 and 4, and the
// lead's value-model decisions): the allowed values, the limits, what makes a
// definition or an actual acceptable, and the variance of actuals against
// what was expected; and the operations every path writes through:
// FileActuals (the single route, the actuals import and an integration's
// sync), SaveBenefits (the routes and the benefits import) and DeleteBenefit. Callers map the
// typed errors (validation.Errors → 422; ErrNotFound and
// ErrInitiativeNotFound → 404; ErrLimitReached, ErrInitiativeArchived,
// ErrBasisLocked and ErrTooManyRevisions → 409; *ParamError → 400).
package benefit

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiative"
)

// Category is what kind of value a benefit brings.
type Category string

const (
	RevenueGrowth      Category = "revenue_growth"
	CostSavings        Category = "cost_savings"
	CostAvoidance      Category = "cost_avoidance"
	Productivity       Category = "productivity"
	RiskReduction      Category = "risk_reduction"
	CustomerExperience Category = "customer_experience"
	OtherCategory      Category = "other"
)

// Categories lists every category.
var Categories = []Category{RevenueGrowth, CostSavings, CostAvoidance, Productivity, RiskReduction, CustomerExperience, OtherCategory}

// Valid reports whether c names a category.
func (c Category) Valid() bool { return slices.Contains(Categories, c) }

// Frequency is how often a benefit is measured: its actuals and expected
// values live on this grid of periods.
type Frequency string

const (
	Monthly   Frequency = "monthly"
	Quarterly Frequency = "quarterly"
)

// Frequencies lists every measurement frequency.
var Frequencies = []Frequency{Monthly, Quarterly}

// Valid reports whether f names a frequency.
func (f Frequency) Valid() bool { return slices.Contains(Frequencies, f) }

// PeriodsPerYear is how many periods of f make a year: expected_value is per
// year, so each period expects expected_value / PeriodsPerYear.
func (f Frequency) PeriodsPerYear() int {
	if f == Quarterly {
		return 4
	}
	return 12
}

// Unit is what a benefit's values count. Only currency benefits enter money
// figures (NPV, ROI, realised value); the others have variance in their own unit.
type Unit string

const (
	UnitCurrency Unit = "currency"
	UnitPercent  Unit = "percent"
	UnitHours    Unit = "hours"
	UnitDays     Unit = "days"
	UnitCount    Unit = "count"
	UnitFTE      Unit = "fte"
	UnitScore    Unit = "score"
)

// Units lists every unit.
var Units = []Unit{UnitCurrency, UnitPercent, UnitHours, UnitDays, UnitCount, UnitFTE, UnitScore}

// Valid reports whether u names a unit.
func (u Unit) Valid() bool { return slices.Contains(Units, u) }

// Status is where a benefit stands.
type Status string

const (
	Active    Status = "active" // the default
	Achieved  Status = "achieved"
	Cancelled Status = "cancelled"
)

// Statuses lists every status.
var Statuses = []Status{Active, Achieved, Cancelled}

// Valid reports whether s names a status.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }

// CountsInTotals reports whether a benefit in this status enters the expected
// and realised totals of its initiative and the portfolio: a cancelled benefit
// no longer promises anything, so counting it would inflate both.
func (s Status) CountsInTotals() bool { return s != Cancelled }

// Limits (spec section 8 and the value-model decisions).
const (
	MaxPerInitiative = 100  // benefits per initiative
	MaxPlanEntries   = 120  // ten years of monthly plan
	MaxAbsValue      = 1e12 // largest |expected_value|, |plan expected| and |actual value|
)

// Errors the API answers with 409: the request is well formed, but the state
// of the initiative does not allow it.
var (
	ErrLimitReached       = errors.New("the initiative already has the maximum of 100 benefits")
	ErrInitiativeArchived = fmt.Errorf("%w: its benefits too", initiative.ErrArchived)
)

// CheckCanAdd reports whether an initiative that has count benefits may get another.
func CheckCanAdd(count int) error {
	if count >= MaxPerInitiative {
		return ErrLimitReached
	}
	return nil
}

// CheckWritable reports whether the benefits of an initiative in this status
// (and their actuals) may change. Archived is final, so its figures are frozen.
func CheckWritable(initiativeStatus initiative.Status) error {
	if initiative.CheckWritable(initiativeStatus) != nil {
		return ErrInitiativeArchived
	}
	return nil
}

// ErrBasisLocked: the API answers 409. Once actuals are recorded, what they
// measure (unit, currency, measurement_frequency) is fixed, and the start
// cannot move past the first recorded period: the actuals would silently
// change meaning or fall outside the benefit.
var ErrBasisLocked = errors.New("the benefit has recorded actuals")

// Basis is what recorded actuals are measured against.
type Basis struct {
	Unit      Unit
	Currency  string
	Frequency Frequency
	Start     time.Time
}

// CheckRedefinition reports whether a benefit measured on stored may be
// redefined as next, given the earliest period with an actual (nil: none).
// The error wraps ErrBasisLocked and says what cannot change.
func CheckRedefinition(stored, next Basis, firstActual *finance.Month) error {
	if firstActual == nil {
		return nil
	}
	switch {
	case stored.Unit != next.Unit:
		return fmt.Errorf("%w: its unit cannot change; create a new benefit for a new basis", ErrBasisLocked)
	case stored.Currency != next.Currency:
		return fmt.Errorf("%w: its currency cannot change; create a new benefit for a new basis", ErrBasisLocked)
	case stored.Frequency != next.Frequency:
		return fmt.Errorf("%w: its measurement_frequency cannot change; create a new benefit for a new basis", ErrBasisLocked)
	case Normalise(next.Frequency, finance.MonthOfTime(next.Start)) > *firstActual:
		return fmt.Errorf("%w from %s: expected_start_date cannot move past that period", ErrBasisLocked, *firstActual)
	}
	return nil
}
