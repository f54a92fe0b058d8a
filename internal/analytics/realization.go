package analytics

import (
	"maps"
	"slices"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

// AtRiskShare and AtRiskPeriods are the at-risk rule: a benefit is at risk
// when its actual was under 80 % of its expected value in each of its two
// latest measured periods, and those two are consecutive periods of its grid.
const (
	AtRiskShare   = 0.8
	AtRiskPeriods = 2
)

var atRiskShare = decimal.NewFromFloat(AtRiskShare)

// PeriodValue is an actual of a period.
type PeriodValue struct {
	Period finance.Month
	Value  decimal.Decimal
}

// RealizationBenefit is a benefit that counts in totals (not cancelled), as
// the realization needs it.
type RealizationBenefit struct {
	ID, InitiativeID uuid.UUID
	Name, Category   string
	Unit             string
	// Money: unit currency. Only money benefits enter the expected and
	// realised sums; every benefit can be at risk (the rule is a ratio).
	Money   bool
	Benefit finance.Benefit // its expectation, and its actuals unless Summary stands for them
	// Summary, when set, summarises its actuals (finance.Benefit.CompareSummary);
	// Benefit.Actuals are then read only if the summary cannot stand for them.
	Summary *finance.ActualSummary
	Latest  []PeriodValue // its latest actuals through the current month, oldest first (at most AtRiskPeriods)
}

// Compare is the benefit's comparison through current: from its summary
// where that stands for its actuals, else from the actuals (the same
// definition, finance.Benefit.CompareToDate).
func (b RealizationBenefit) Compare(current finance.Month, fx finance.FX) (finance.Comparison, []finance.MissingRate) {
	if b.Summary != nil {
		if c, ok := b.Benefit.CompareSummary(*b.Summary, current, fx); ok {
			return c, nil
		}
	}
	return b.Benefit.CompareToDate(current, fx)
}

// NeedsActuals reports whether Compare must read the benefit's actuals:
// none summarised, or a summary that cannot stand for them.
func (b RealizationBenefit) NeedsActuals(current finance.Month, fx finance.FX) bool {
	if b.Summary == nil {
		return true
	}
	return !b.Benefit.SummaryStands(*b.Summary, current, fx)
}

// Amounts are expected against realised to date of a group of benefits,
// like for like (finance.Comparison, as the initiative detail and the
// variance report; a part whose FX rates are missing is unknown).
type Amounts struct {
	finance.Comparison
}

func zero() Amounts { return Amounts{} }

// CategoryAmounts are the amounts of one benefit category.
type CategoryAmounts struct {
	Category string
	Amounts
}

// AtRisk is a benefit at risk with the periods that put it there.
type AtRisk struct {
	Benefit RealizationBenefit
	Periods []AtRiskPeriod // oldest first
}

// AtRiskPeriod is one period of the at-risk rule, in the benefit's own unit.
type AtRiskPeriod struct {
	Period           finance.Month
	Expected, Actual decimal.Decimal
}

// Realization is expected against realised to date for a set of initiatives.
type Realization struct {
	Total       Amounts
	Initiatives map[uuid.UUID]Amounts // every initiative passed in
	Categories  []CategoryAmounts     // categories with a money benefit, by name
	AtRisk      []AtRisk              // lowest latest share first
	Missing     []finance.MissingRate // rates the sums lacked
}

// ComputeRealization compares the money benefits per initiative, per
// category and in total, like for like through the current month
// (finance.Benefit.CompareToDate, each period at its rate: the initiative
// detail's figures), and applies the at-risk rule to every benefit.
func ComputeRealization(initiatives []uuid.UUID, benefits []RealizationBenefit, current finance.Month, fx finance.FX) Realization {
	out := Realization{Total: zero(), Initiatives: map[uuid.UUID]Amounts{}}
	// Sums kept in place (finance.ComparisonSum): three merges per benefit.
	var total finance.ComparisonSum
	byInitiative := make(map[uuid.UUID]*finance.ComparisonSum, len(initiatives))
	for _, id := range initiatives {
		byInitiative[id] = new(finance.ComparisonSum)
	}
	categories := map[string]*finance.ComparisonSum{}
	var missing []finance.MissingRate
	for _, b := range benefits {
		if risk, ok := atRisk(b); ok {
			out.AtRisk = append(out.AtRisk, risk)
		}
		if !b.Money {
			continue
		}
		c, miss := b.Compare(current, fx)
		missing = append(missing, miss...)
		total.Merge(c)
		in, listed := byInitiative[b.InitiativeID]
		if !listed {
			in = new(finance.ComparisonSum)
			byInitiative[b.InitiativeID] = in
		}
		in.Merge(c)
		cat, ok := categories[b.Category]
		if !ok {
			cat = new(finance.ComparisonSum)
			categories[b.Category] = cat
		}
		cat.Merge(c)
	}
	out.Total = Amounts{total.Comparison()}
	for id, in := range byInitiative {
		out.Initiatives[id] = Amounts{in.Comparison()}
	}
	for _, name := range slices.Sorted(maps.Keys(categories)) {
		out.Categories = append(out.Categories, CategoryAmounts{Category: name, Amounts: Amounts{categories[name].Comparison()}})
	}
	share := func(r AtRisk) decimal.Decimal {
		last := r.Periods[len(r.Periods)-1]
		return last.Actual.Div(last.Expected)
	}
	slices.SortStableFunc(out.AtRisk, func(a, b AtRisk) int { return share(a).Cmp(share(b)) })
	out.Missing = sortMissing(missing)
	return out
}

// atRisk applies the rule to b's latest actuals.
func atRisk(b RealizationBenefit) (AtRisk, bool) {
	if len(b.Latest) < AtRiskPeriods {
		return AtRisk{}, false
	}
	latest := b.Latest[len(b.Latest)-AtRiskPeriods:]
	step := 1
	if b.Benefit.Frequency == finance.MeasuredQuarterly {
		step = 3
	}
	out := AtRisk{Benefit: b}
	for i, a := range latest {
		p := b.Benefit.Frequency.PeriodOf(a.Period)
		if i > 0 && p != b.Benefit.Frequency.PeriodOf(latest[i-1].Period).Add(step) {
			return AtRisk{}, false // not two periods running
		}
		expected := b.Benefit.ExpectedFor(p)
		if expected.Sign() <= 0 || a.Value.GreaterThanOrEqual(expected.Mul(atRiskShare)) {
			return AtRisk{}, false
		}
		out.Periods = append(out.Periods, AtRiskPeriod{Period: p, Expected: expected, Actual: a.Value})
	}
	return out, true
}
