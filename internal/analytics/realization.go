package analytics

import (
	"cmp"
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/internal/finance"
)

// AtRiskShare and AtRiskPeriods are the at-risk rule: a benefit is at risk
// when its actual was under 80 % of its expected value in each of its two
// latest measured periods, and those two are consecutive periods of its grid.
const (
	AtRiskShare   = 0.8
	AtRiskPeriods = 2
)

// PeriodValue is an actual of a period.
type PeriodValue struct {
	Period finance.Month
	Value  float64
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
	Benefit finance.Benefit // its expectation (Actuals not needed)
	Latest  []PeriodValue   // its latest actuals through the current month, oldest first (at most AtRiskPeriods)
}

// RealizedSum is Σ of the actuals through the current month of the money
// benefits of one initiative and category, in the base currency (summed in
// PostgreSQL from the benefit_actual_months rollup); Value is nil when an
// actual lacks a rate. A group without a row has realised 0.
type RealizedSum struct {
	InitiativeID uuid.UUID
	Category     string
	Value        *float64
}

// Amounts are expected and realised to date of a group of benefits; a sum
// is nil when a member's amount lacks an FX rate.
type Amounts struct {
	Expected, Realized *float64
}

// Percent is realised / expected × 100; nil when either is unknown or
// expected is 0.
func (a Amounts) Percent() *float64 {
	if a.Expected == nil || a.Realized == nil || *a.Expected == 0 {
		return nil
	}
	return new(*a.Realized / *a.Expected * 100)
}

func (a *Amounts) add(expected, realized *float64) {
	a.Expected = addKnown(a.Expected, expected)
	a.Realized = addKnown(a.Realized, realized)
}

// addKnown is sum + v, unknown (nil) once either is.
func addKnown(sum, v *float64) *float64 {
	if sum == nil || v == nil {
		return nil
	}
	return new(*sum + *v)
}

func zero() Amounts { return Amounts{Expected: new(0.0), Realized: new(0.0)} }

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
	Expected, Actual float64
}

// Realization is expected against realised to date for a set of initiatives.
type Realization struct {
	Total       Amounts
	Initiatives map[uuid.UUID]Amounts // every initiative passed in
	Categories  []CategoryAmounts     // categories with a money benefit, by name
	AtRisk      []AtRisk              // lowest latest share first
	Missing     []finance.MissingRate // rates the expected sums lacked (the caller adds those of the actuals)
}

// ComputeRealization sums the money benefits per initiative, per category
// and in total: expected to date as the initiative detail computes it (every
// period from the benefit's first through the current month, each at its
// period's rate) and realised to date as given per initiative and category;
// and applies the at-risk rule to every benefit.
func ComputeRealization(initiatives []uuid.UUID, benefits []RealizationBenefit, realized []RealizedSum, current finance.Month, fx finance.FX) Realization {
	out := Realization{Total: zero(), Initiatives: map[uuid.UUID]Amounts{}}
	for _, id := range initiatives {
		out.Initiatives[id] = zero()
	}
	categories := map[string]Amounts{}
	missing := map[finance.MissingRate]bool{}
	add := func(initiativeID uuid.UUID, category string, expected, realized *float64) {
		out.Total.add(expected, realized)
		in, listed := out.Initiatives[initiativeID]
		if !listed {
			in = zero()
		}
		in.add(expected, realized)
		out.Initiatives[initiativeID] = in
		c, ok := categories[category]
		if !ok {
			c = zero()
		}
		c.add(expected, realized)
		categories[category] = c
	}
	for _, b := range benefits {
		if risk, ok := atRisk(b); ok {
			out.AtRisk = append(out.AtRisk, risk)
		}
		if !b.Money {
			continue
		}
		var expected *float64
		if first := b.Benefit.Frequency.PeriodOf(b.Benefit.Start); first > current {
			expected = new(0.0)
		} else {
			cf, miss := finance.BuildCashFlows(finance.Horizon{Start: first, End: current}, []finance.Benefit{b.Benefit}, nil, finance.BasisExpected, fx)
			for _, m := range miss {
				missing[m] = true
			}
			if len(miss) == 0 {
				expected = new(cf.TotalBenefits())
			}
		}
		add(b.InitiativeID, b.Category, expected, new(0.0))
	}
	for _, r := range realized {
		add(r.InitiativeID, r.Category, new(0.0), r.Value)
	}
	for _, name := range slices.Sorted(maps.Keys(categories)) {
		out.Categories = append(out.Categories, CategoryAmounts{Category: name, Amounts: categories[name]})
	}
	share := func(r AtRisk) float64 { last := r.Periods[len(r.Periods)-1]; return last.Actual / last.Expected }
	slices.SortStableFunc(out.AtRisk, func(a, b AtRisk) int { return cmp.Compare(share(a), share(b)) })
	out.Missing = sortMissing(slices.Collect(maps.Keys(missing)))
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
		if expected <= 0 || a.Value >= AtRiskShare*expected {
			return AtRisk{}, false
		}
		out.Periods = append(out.Periods, AtRiskPeriod{Period: p, Expected: expected, Actual: a.Value})
	}
	return out, true
}
