package businesscase

// The business-case diff ("Business case diff"): the figures of
// two cases and the change between them attributed to its causes by
// sequential substitution. docs/numbers.md →
// "Business-case diff" is the definition; this file is its one
// implementation.

import (
	"slices"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/valuation"
)

// Item is one money benefit or cost line of a case's cash flow: its expected
// monthly amounts in the base currency (converted at each month's rate, as
// Figures converts them) from its first month Start, trailing zero months
// left out. Trailing zeros change none of ROI, NPV and payback; the first
// month does (NPV's t = 0 and payback count from the earliest first month).
type Item struct {
	ID     string            `json:"id"`
	Name   string            `json:"name"`
	Start  finance.Month     `json:"start"`
	Months []decimal.Decimal `json:"months"` // exact; a frozen document of older versions holds JSON numbers, read alike
}

// Inputs are what a case's ROI, NPV and payback are computed from: frozen
// into the approval's document (internal/export.Freeze) and computed from
// the live rows for a case not approved.
type Inputs struct {
	BaseCurrency string  `json:"base_currency"`
	DiscountRate float64 `json:"discount_rate"`
	Benefits     []Item  `json:"benefits"` // the money benefits, in stored order
	Costs        []Item  `json:"costs"`    // the cost lines, in stored order
}

// InputsOf are the inputs of an initiative's rows: the items of the default
// horizon (the one Figures evaluates), each benefit on the expected basis.
// An item whose first month is after the horizon (cut by the 60-month cap)
// contributes nothing and is left out. missing lists the FX rates an amount
// needed and the tenant has not entered: the inputs are then partial and
// must not be compared (the diff says missing_fx_rates).
func InputsOf(r valuation.Rows) (in Inputs, missing []finance.MissingRate, err error) {
	in = Inputs{BaseCurrency: r.Settings.BaseCurrency, DiscountRate: r.Settings.DiscountRate, Benefits: []Item{}, Costs: []Item{}}
	fx, err := valuation.FX(r.Settings.BaseCurrency, r.Rates)
	if err != nil {
		return in, nil, err
	}
	h, ok := finance.DefaultHorizon(valuation.MoneyBenefits(r), valuation.Costs(r))
	if !ok {
		return in, nil, nil
	}
	item := func(id, name string, start finance.Month, series []decimal.Decimal) (Item, bool) {
		if start > h.End {
			return Item{}, false
		}
		start = max(start, h.Start)
		months := slices.Clone(series[start-h.Start:])
		for len(months) > 0 && months[len(months)-1].IsZero() {
			months = months[:len(months)-1]
		}
		return Item{ID: id, Name: name, Start: start, Months: months}, true
	}
	r.EachMoneyBenefit(func(b dbsqlc.Benefit, fb finance.Benefit) {
		cf, miss := finance.BuildCashFlows(h, []finance.Benefit{fb}, nil, finance.BasisExpected, fx)
		missing = mergeMissing(missing, miss)
		if it, ok := item(b.ID.String(), b.Name, fb.Frequency.PeriodOf(fb.Start), cf.Benefits); ok {
			in.Benefits = append(in.Benefits, it)
		}
	})
	costs := valuation.Costs(r)
	for i, c := range r.Costs {
		cf, miss := finance.BuildCashFlows(h, nil, costs[i:i+1], finance.BasisExpected, fx)
		missing = mergeMissing(missing, miss)
		if it, ok := item(c.ID.String(), c.Name, costs[i].Period, cf.Costs); ok {
			in.Costs = append(in.Costs, it)
		}
	}
	return in, missing, nil
}

// Figure is a diffed figure: a value rounded to 2 decimals, or null with
// its reason (finance's reasons: no_costs, never_paid_back).
type Figure struct {
	Value  *float64 `json:"value"`
	Reason *string  `json:"reason"`
}

// DiffFigures are the figures a diff compares.
type DiffFigures struct {
	ROIPercent    Figure  `json:"roi_percent"`
	NPV           Figure  `json:"npv"`
	PaybackMonths Figure  `json:"payback_months"`
	DiscountRate  float64 `json:"discount_rate"`
}

// Change is the change of each figure; null when either side has no value.
type Change struct {
	ROIPercent    *float64 `json:"roi_percent"`
	NPV           *float64 `json:"npv"`
	PaybackMonths *float64 `json:"payback_months"`
}

// Cause is what one substitution step changes.
type Cause string

const (
	CauseDiscountRate   Cause = "discount_rate"
	CauseCosts          Cause = "costs"
	CauseBenefitRemoved Cause = "benefit_removed"
	CauseBenefitAdded   Cause = "benefit_added"
	CauseBenefitChanged Cause = "benefit_changed"
)

// Step is one substitution: its cause, the benefit it concerns (null for the
// discount rate and the costs), the figures after it and the change it makes.
type Step struct {
	Cause       Cause       `json:"cause"`
	BenefitID   *string     `json:"benefit_id"`
	BenefitName *string     `json:"benefit_name"`
	Figures     DiffFigures `json:"figures"`
	Change      Change      `json:"change"`
}

// FiguresOf evaluates inputs with the finance core over the months of its
// items: from the earliest first month through the latest month with an
// amount. No item at all: NPV 0, ROI and payback null (no_costs), as
// Figures says of an initiative without money benefits or costs.
func FiguresOf(in Inputs) DiffFigures {
	return evaluate(in.Benefits, in.Costs, in.DiscountRate, in.BaseCurrency)
}

func evaluate(benefits, costs []Item, rate float64, currency string) DiffFigures {
	out := DiffFigures{DiscountRate: rate}
	if len(benefits)+len(costs) == 0 {
		out.NPV.Value = new(0.0)
		out.ROIPercent.Reason, out.PaybackMonths.Reason = new(string(finance.NoCosts)), new(string(finance.NoCosts))
		return out
	}
	all := append(slices.Clone(benefits), costs...)
	h := finance.Horizon{Start: all[0].Start, End: all[0].Start}
	for _, it := range all {
		h.Start = min(h.Start, it.Start)
		h.End = max(h.End, it.Start.Add(max(len(it.Months), 1)-1))
	}
	cf := finance.NewCashFlows(h)
	place := func(into []decimal.Decimal, items []Item) {
		for _, it := range items {
			for i, v := range it.Months {
				j := int(it.Start-h.Start) + i
				into[j] = into[j].Add(v)
			}
		}
	}
	place(cf.Benefits, benefits)
	place(cf.Costs, costs)
	m := finance.Evaluate(cf, rate)
	fig := func(r finance.Result) Figure {
		if v, ok := r.Get(); ok {
			return Figure{Value: new(money.Percent(v))}
		}
		return Figure{Reason: new(string(r.Reason))}
	}
	out.ROIPercent, out.NPV, out.PaybackMonths = fig(m.ROIPercent), Figure{Value: new(money.Amount(decimal.NewFromFloat(m.NPV), currency))}, fig(m.PaybackMonths)
	return out
}

// ChangeOf is to − from, figure by figure (each rounded to 2 decimals, so a
// sum of changes is exactly the change of the sum).
func ChangeOf(from, to DiffFigures) Change {
	d := func(a, b Figure) *float64 {
		if a.Value == nil || b.Value == nil {
			return nil
		}
		return new(money.PercentOf(decimal.NewFromFloat(*b.Value).Sub(decimal.NewFromFloat(*a.Value))))
	}
	return Change{ROIPercent: d(from.ROIPercent, to.ROIPercent), NPV: d(from.NPV, to.NPV), PaybackMonths: d(from.PaybackMonths, to.PaybackMonths)}
}

// Attribute walks from base to target by sequential substitution in a
// fixed order: (1) the discount rate, (2) the costs (every cost line at
// once), (3) each benefit of base that target lacks, removed (base's order),
// (4) each benefit of target that base lacks, added (target's order), (5)
// each benefit in both whose amounts or first month differ, replaced by
// target's (target's order). Benefits are matched by id. After each step
// the figures are recomputed with the finance core; a step's change is the
// figures after it minus those before, so the changes of the steps add up
// exactly to target's figures minus base's (where every step has a value).
// The last step's figures are target's own (FiguresOf(target)).
func Attribute(base, target Inputs) []Step {
	benefits := slices.Clone(base.Benefits)
	costs := base.Costs
	rate := base.DiscountRate
	prev := FiguresOf(base)
	steps := []Step{}
	add := func(cause Cause, it *Item) {
		after := evaluate(benefits, costs, rate, target.BaseCurrency)
		s := Step{Cause: cause, Figures: after, Change: ChangeOf(prev, after)}
		if it != nil {
			s.BenefitID, s.BenefitName = new(it.ID), new(it.Name)
		}
		steps = append(steps, s)
		prev = after
	}
	rate = target.DiscountRate
	add(CauseDiscountRate, nil)
	costs = target.Costs
	add(CauseCosts, nil)
	find := func(items []Item, id string) int {
		return slices.IndexFunc(items, func(it Item) bool { return it.ID == id })
	}
	for _, b := range base.Benefits {
		if find(target.Benefits, b.ID) < 0 {
			benefits = slices.Delete(benefits, find(benefits, b.ID), find(benefits, b.ID)+1)
			add(CauseBenefitRemoved, &b)
		}
	}
	for _, b := range target.Benefits {
		if find(base.Benefits, b.ID) < 0 {
			benefits = append(benefits, b)
			add(CauseBenefitAdded, &b)
		}
	}
	for _, b := range target.Benefits {
		if i := find(base.Benefits, b.ID); i >= 0 && !sameAmounts(base.Benefits[i], b) {
			benefits[find(benefits, b.ID)] = b
			add(CauseBenefitChanged, &b)
		}
	}
	// The state now holds target's items, perhaps in another order: the
	// last step's figures are target's own, summed in target's order.
	last := &steps[len(steps)-1]
	before := FiguresOf(base)
	if len(steps) > 1 {
		before = steps[len(steps)-2].Figures
	}
	last.Figures = FiguresOf(target)
	last.Change = ChangeOf(before, last.Figures)
	return steps
}

func sameAmounts(a, b Item) bool { return a.Start == b.Start && slices.Equal(a.Months, b.Months) }
