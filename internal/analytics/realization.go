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
// the realization reads it one by one: a money benefit the group sums leave
// out (compared here from its actuals), or one the at-risk rule may hold for.
type RealizationBenefit struct {
	ID, InitiativeID uuid.UUID
	Name, Category   string
	Unit             string
	// Money: unit currency. Only money benefits enter the expected and
	// realised sums; every benefit can be at risk (the rule is a ratio).
	Money bool
	// Summed: already compared in the group sums (GroupSum); only the at-risk
	// rule applies to it here.
	Summed  bool
	Benefit finance.Benefit // its expectation, and its actuals when it is compared here
	Latest  []PeriodValue   // its latest actuals through the current month, oldest first (at most AtRiskPeriods)
}

// GroupSum is the like-for-like comparison of the money benefits of one
// initiative and category that were compared together (in SQL, from each
// benefit's measured expectation: the same definition as
// finance.Benefit.CompareToDate).
type GroupSum struct {
	InitiativeID uuid.UUID
	Category     string
	finance.Comparison
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
// detail's figures): the group sums as they come, the benefits not summed
// one by one; and applies the at-risk rule to every benefit given.
func ComputeRealization(initiatives []uuid.UUID, sums []GroupSum, benefits []RealizationBenefit, current finance.Month, fx finance.FX) Realization {
	out := Realization{Total: zero(), Initiatives: map[uuid.UUID]Amounts{}}
	// Sums kept in place (finance.ComparisonSum): three merges per benefit.
	var total finance.ComparisonSum
	byInitiative := make(map[uuid.UUID]*finance.ComparisonSum, len(initiatives))
	for _, id := range initiatives {
		byInitiative[id] = new(finance.ComparisonSum)
	}
	categories := map[string]*finance.ComparisonSum{}
	var missing []finance.MissingRate
	merge := func(initiative uuid.UUID, category string, c finance.Comparison) {
		total.Merge(c)
		in, listed := byInitiative[initiative]
		if !listed {
			in = new(finance.ComparisonSum)
			byInitiative[initiative] = in
		}
		in.Merge(c)
		cat, ok := categories[category]
		if !ok {
			cat = new(finance.ComparisonSum)
			categories[category] = cat
		}
		cat.Merge(c)
	}
	for _, g := range sums {
		merge(g.InitiativeID, g.Category, g.Comparison)
	}
	for _, b := range benefits {
		if risk, ok := atRisk(b); ok {
			out.AtRisk = append(out.AtRisk, risk)
		}
		if !b.Money || b.Summed {
			continue
		}
		c, miss := b.Benefit.CompareToDate(current, fx)
		missing = append(missing, miss...)
		merge(b.InitiativeID, b.Category, c)
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
