// Package valuation maps the stored rows an initiative's value is computed
// from (benefits with their plans and actuals, costs, FX rates) onto the
// finance core (internal/finance). The initiative detail computes its
// figures from them (internal/initiativevalue), as do the business case's
// snapshot, its diff, exports and analytics; the definitions are
// docs/numbers.md.
package valuation

import (
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/validation"
)

// Rows are the stored records one initiative's figures are computed from
// (initiativevalue.Load reads them).
type Rows struct {
	Settings     settings.Settings
	Benefits     []dbsqlc.Benefit
	Plans        []dbsqlc.BenefitPlanEntry
	Actuals      []dbsqlc.BenefitActual
	Costs        []dbsqlc.InitiativeCost
	Stakeholders []dbsqlc.Stakeholder
	Rates        []dbsqlc.FxRate // at least the months the figures at the time of loading need
}

// MoneyBenefits are the benefits that enter money figures: unit currency and
// a status that counts in totals (cancelled ones do not), with their plans
// and actuals, in the finance core's terms.
func MoneyBenefits(r Rows) []finance.Benefit {
	return MoneyBenefitsWith(r, ActualsOf(r.Actuals))
}

// MoneyBenefitsWith is MoneyBenefits with the actuals given grouped instead
// of read from r.Actuals (which it ignores): a reader of many initiatives
// groups their actuals once as it reads them rather than keeping every one
// as a stored row (1,000 initiatives: 360,000 rows).
func MoneyBenefitsWith(r Rows, actuals Actuals) []finance.Benefit {
	var out []finance.Benefit
	r.eachMoneyBenefit(actuals, func(_ dbsqlc.Benefit, fb finance.Benefit) { out = append(out, fb) })
	return out
}

// EachMoneyBenefit calls f with every benefit that enters money figures, in
// stored order, as stored and in the finance core's terms.
func (r Rows) EachMoneyBenefit(f func(dbsqlc.Benefit, finance.Benefit)) {
	r.eachMoneyBenefit(ActualsOf(r.Actuals), f)
}

func (r Rows) eachMoneyBenefit(actuals Actuals, f func(dbsqlc.Benefit, finance.Benefit)) {
	plans := PlansByBenefit(r.Plans)
	for _, b := range r.Benefits {
		if benefit.Unit(b.Unit) != benefit.UnitCurrency || b.Currency == nil || !benefit.Status(b.Status).CountsInTotals() {
			continue
		}
		f(b, FinanceBenefit(b, plans[b.ID], actuals[b.ID]))
	}
}

// Actuals are actual values by benefit and month, as finance.Benefit holds
// them (Actuals[id] is benefit id's).
type Actuals map[uuid.UUID]map[finance.Month]decimal.Decimal

// ActualsOf groups stored actuals by benefit and month.
func ActualsOf(rows []dbsqlc.BenefitActual) Actuals {
	out := Actuals{}
	for _, a := range rows {
		out.Add(a.BenefitID, a.Period, a.Value)
	}
	return out
}

// Add files one actual: benefit's value for the month of period (a later
// one for the same month replaces it).
func (a Actuals) Add(benefitID uuid.UUID, period time.Time, value decimal.Decimal) {
	m := a[benefitID]
	if m == nil {
		m = map[finance.Month]decimal.Decimal{}
		a[benefitID] = m
	}
	m[finance.MonthOfTime(period)] = value
}

// FinanceBenefit is a stored benefit in the finance core's terms, whatever
// its unit (the expectation does not depend on the currency; "" when none).
// No plan entries: nil, the even spread.
func FinanceBenefit(b dbsqlc.Benefit, plan []finance.PlanEntry, actuals map[finance.Month]decimal.Decimal) finance.Benefit {
	fb := finance.Benefit{
		ExpectedValue: b.ExpectedValue, Frequency: finance.Frequency(b.MeasurementFrequency),
		Start: finance.MonthOfTime(b.ExpectedStartDate), Plan: plan, Actuals: actuals,
	}
	if b.Currency != nil {
		fb.Currency = *b.Currency
	}
	if b.ExpectedEndDate != nil {
		fb.End = new(finance.MonthOfTime(*b.ExpectedEndDate))
	}
	return fb
}

// PlansByBenefit groups stored plan entries by benefit, in the finance core's terms.
func PlansByBenefit(rows []dbsqlc.BenefitPlanEntry) map[uuid.UUID][]finance.PlanEntry {
	out := map[uuid.UUID][]finance.PlanEntry{}
	for _, p := range rows {
		out[p.BenefitID] = append(out[p.BenefitID], finance.PlanEntry{Period: finance.MonthOfTime(p.Period), Expected: p.Expected})
	}
	return out
}

// FX converts to base with the stored rates (a stored rate for the base
// itself is not used: it is 1 by definition).
func FX(base string, rows []dbsqlc.FxRate) (finance.FX, error) {
	rates := finance.NewRates(base)
	for _, row := range rows {
		err := rates.Set(row.Currency, finance.MonthOfTime(row.Period), row.Rate)
		if ve, ok := errors.AsType[*validation.Error](err); ok && ve.Code == validation.CodeNotAllowed {
			continue
		}
		if err != nil {
			return finance.FX{}, err
		}
	}
	return rates.FX(), nil
}

// Costs are the cost lines of r in the finance core's terms.
func Costs(r Rows) []finance.Cost {
	out := make([]finance.Cost, len(r.Costs))
	for i, c := range r.Costs {
		out[i] = finance.Cost{Amount: c.Amount, Currency: c.Currency, Recurrence: finance.Recurrence(c.Recurrence), Period: finance.MonthOfTime(c.Period)}
		if c.EndPeriod != nil {
			out[i].End = new(finance.MonthOfTime(*c.EndPeriod))
		}
	}
	return out
}

// VarianceReport is the variance report of rows at now (GET /v1/benefits/{id}/variance): the
// fiscal year's window, from the benefit's first period, and the variance of the benefit's
// actuals against its expectation over it. A query the window cannot take is a
// *benefit.ParamError.
func VarianceReport(rows benefit.VarianceRows, now time.Time) (benefit.Window, benefit.Variance, error) {
	b, f := rows.Benefit, benefit.Frequency(rows.Benefit.MeasurementFrequency)
	periods := rows.ActualPeriods()
	fb := FinanceBenefit(b, PlansByBenefit(rows.Plan)[b.ID], make(map[finance.Month]decimal.Decimal, len(periods)))
	for i, a := range rows.Actuals {
		fb.Actuals[periods[i]] = a.Value
	}
	w, err := benefit.VarianceWindow(f, rows.Query, periods, now)
	if err != nil {
		return benefit.Window{}, benefit.Variance{}, err
	}
	w = w.From(benefit.Normalise(f, fb.Start))
	return w, benefit.ComputeVariance(benefit.ExpectedOver(fb, w.Periods), fb.Actuals), nil
}
