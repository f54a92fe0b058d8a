// Package valuation computes what an initiative is worth so far, for its
// detail (GET /v1/initiatives/{id}): expected and realised value to date,
// realisation, total cost, all in the tenant's base currency, and the
// stakeholder summary with the at-risk count. It maps stored rows onto the
// finance core (internal/finance) and the stakeholder rules
// (internal/stakeholder); the definitions are docs/numbers.md.
package valuation

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/stakeholder"
	"github.com/valuecase/valuecase/internal/validation"
)

// Rows are the stored records one initiative's figures are computed from.
type Rows struct {
	Settings     settings.Settings
	Benefits     []dbsqlc.Benefit
	Plans        []dbsqlc.BenefitPlanEntry
	Actuals      []dbsqlc.BenefitActual
	Costs        []dbsqlc.InitiativeCost
	Stakeholders []dbsqlc.Stakeholder
	Rates        []dbsqlc.FxRate // at least the months RatePeriods names
}

// Load reads the rows of an initiative in the tenant's transaction: its
// benefits with their plans and actuals, costs, stakeholders, the tenant's
// settings and the FX rates of the months the figures at now can need.
func Load(ctx context.Context, tx dbsqlc.DBTX, tenantID, initiativeID uuid.UUID, now time.Time) (Rows, error) {
	var r Rows
	var err error
	if r.Settings, err = settings.Load(ctx, tx, tenantID); err != nil {
		return r, err
	}
	if r.Benefits, err = db.Q.BenefitListByInitiative(ctx, tx, dbsqlc.BenefitListByInitiativeParams{TenantID: tenantID, InitiativeID: initiativeID}); err != nil {
		return r, err
	}
	ids := make([]uuid.UUID, len(r.Benefits))
	for i, b := range r.Benefits {
		ids[i] = b.ID
	}
	if r.Plans, err = db.Q.BenefitPlanList(ctx, tx, dbsqlc.BenefitPlanListParams{TenantID: tenantID, BenefitIds: ids}); err != nil {
		return r, err
	}
	if r.Actuals, err = db.Q.ActualListByInitiative(ctx, tx, dbsqlc.ActualListByInitiativeParams{TenantID: tenantID, InitiativeID: initiativeID}); err != nil {
		return r, err
	}
	if r.Costs, err = db.Q.CostListByInitiative(ctx, tx, dbsqlc.CostListByInitiativeParams{TenantID: tenantID, InitiativeID: initiativeID}); err != nil {
		return r, err
	}
	if r.Stakeholders, err = db.Q.StakeholderListByInitiative(ctx, tx, dbsqlc.StakeholderListByInitiativeParams{TenantID: tenantID, InitiativeID: initiativeID}); err != nil {
		return r, err
	}
	if from, to, ok := RatePeriods(MoneyBenefits(r), Costs(r), now); ok {
		r.Rates, err = db.Q.FxRateList(ctx, tx, dbsqlc.FxRateListParams{TenantID: tenantID, FromPeriod: new(from.FirstDay()), ToPeriod: new(to.FirstDay())})
	}
	return r, err
}

// MoneyBenefits are the benefits that enter money figures: unit currency and
// a status that counts in totals (cancelled ones do not), with their plans
// and actuals, in the finance core's terms.
func MoneyBenefits(r Rows) []finance.Benefit {
	var out []finance.Benefit
	r.EachMoneyBenefit(func(_ dbsqlc.Benefit, fb finance.Benefit) { out = append(out, fb) })
	return out
}

// EachMoneyBenefit calls f with every benefit that enters money figures, in
// stored order, as stored and in the finance core's terms.
func (r Rows) EachMoneyBenefit(f func(dbsqlc.Benefit, finance.Benefit)) {
	plans := PlansByBenefit(r.Plans)
	actuals := map[uuid.UUID]map[finance.Month]decimal.Decimal{}
	for _, a := range r.Actuals {
		if actuals[a.BenefitID] == nil {
			actuals[a.BenefitID] = map[finance.Month]decimal.Decimal{}
		}
		actuals[a.BenefitID][finance.MonthOfTime(a.Period)] = a.Value
	}
	for _, b := range r.Benefits {
		if benefit.Unit(b.Unit) != benefit.UnitCurrency || b.Currency == nil || !benefit.Status(b.Status).CountsInTotals() {
			continue
		}
		f(b, FinanceBenefit(b, plans[b.ID], actuals[b.ID]))
	}
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

// RatePeriods is the range of months whose FX rates Compute may use at now:
// the initiative's default horizon, extended through the current month for
// the to-date figures. ok is false when there are neither money benefits nor
// costs (no rate is needed).
func RatePeriods(benefits []finance.Benefit, costs []finance.Cost, now time.Time) (from, to finance.Month, ok bool) {
	h, ok := finance.DefaultHorizon(benefits, costs)
	if !ok {
		return 0, 0, false
	}
	return h.Start, max(h.End, finance.MonthOfTime(now)), true
}

// Metrics are the money and stakeholder figures of an initiative, exact
// (rounded at the edge). A money figure is nil when an amount it needs has no
// FX rate (MissingFXRates lists each such rate); it is never a partial sum of
// what could be converted. Expected and realised compare like for like
// (finance.Comparison): the expectation of the periods not measured yet is
// reported apart and is not a shortfall.
type Metrics struct {
	BenefitsCount int // every benefit of the initiative, any unit and status
	// ExpectedToDate is the expected value of every period through the
	// current month, measured or not (ExpectedMeasured + ExpectedUnmeasured).
	ExpectedToDate     *decimal.Decimal
	ExpectedMeasured   *decimal.Decimal // of the periods with an actual
	ExpectedUnmeasured *decimal.Decimal // of the periods through the current month without one
	RealizedToDate     *decimal.Decimal // actuals recorded for the periods through the current month
	Variance           *decimal.Decimal // realised − expected measured
	VariancePercent    *decimal.Decimal // variance / expected measured × 100; nil when that is 0
	RealizationPercent *decimal.Decimal // realised / expected measured × 100; nil when that is 0
	TotalCost          *decimal.Decimal // every cost schedule over the default horizon
	StakeholdersCount  int
	StakeholdersAtRisk int
	BaseCurrency       string
	MissingFXRates     []finance.MissingRate // sorted, each once; empty (not nil) when none
}

// StakeholderSummary is one element of the detail's `stakeholders`.
type StakeholderSummary struct {
	ID           uuid.UUID
	Name         string
	Role         *string
	Influence    stakeholder.Influence
	Interest     stakeholder.Interest
	Quadrant     stakeholder.Quadrant
	Sentiment    *stakeholder.Sentiment // of the latest engagement; nil when never engaged
	AtRisk       bool
	AtRiskReason *stakeholder.RiskReason
}

// Detail is everything the initiative detail derives from its rows.
type Detail struct {
	Metrics      Metrics
	Stakeholders []StakeholderSummary
}

// Compute derives the detail of an initiative at now (its UTC month is the
// current month).
func Compute(r Rows, now time.Time) (Detail, error) {
	fx, err := FX(r.Settings.BaseCurrency, r.Rates)
	if err != nil {
		return Detail{}, err
	}
	current := finance.MonthOfTime(now)
	benefits, costs := MoneyBenefits(r), Costs(r)
	missing := map[finance.MissingRate]bool{}
	note := func(ms []finance.MissingRate) bool {
		for _, m := range ms {
			missing[m] = true
		}
		return len(ms) == 0
	}

	d := Detail{Metrics: Metrics{BenefitsCount: len(r.Benefits), BaseCurrency: r.Settings.BaseCurrency}}
	m := &d.Metrics
	c, miss := finance.CompareToDate(benefits, current, fx)
	note(miss)
	m.SetComparison(c)
	if h, ok := finance.DefaultHorizon(benefits, costs); !ok {
		m.TotalCost = new(decimal.Zero) // neither costs nor money benefits
	} else if cf, miss := finance.BuildCashFlows(h, nil, costs, finance.BasisExpected, fx); note(miss) {
		m.TotalCost = new(cf.TotalCosts())
	}
	m.MissingFXRates = slices.SortedFunc(maps.Keys(missing), func(a, b finance.MissingRate) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.Period, b.Period))
	})
	if m.MissingFXRates == nil {
		m.MissingFXRates = []finance.MissingRate{}
	}

	d.Stakeholders = make([]StakeholderSummary, len(r.Stakeholders))
	for i, s := range r.Stakeholders {
		d.Stakeholders[i] = summarise(s, now)
		if d.Stakeholders[i].AtRisk {
			m.StakeholdersAtRisk++
		}
	}
	m.StakeholdersCount = len(r.Stakeholders)
	return d, nil
}

// SetComparison fills the expected and realised figures from c; the
// figures of a part whose rates are missing stay nil.
func (m *Metrics) SetComparison(c finance.Comparison) {
	if !c.MeasuredUnknown {
		m.ExpectedMeasured, m.RealizedToDate, m.Variance = new(c.Expected), new(c.Actual), new(c.Variance())
		m.VariancePercent, m.RealizationPercent = c.VariancePercent(), c.RealizationPercent()
	}
	if !c.UnmeasuredUnknown {
		m.ExpectedUnmeasured = new(c.Unmeasured)
	}
	if !c.MeasuredUnknown && !c.UnmeasuredUnknown {
		m.ExpectedToDate = new(c.PlanToDate())
	}
}

// summarise derives a stakeholder's summary from its stored engagement
// columns (stakeholder.SummariseStored, as the stakeholder resource does).
func summarise(s dbsqlc.Stakeholder, now time.Time) StakeholderSummary {
	influence, interest := stakeholder.Influence(s.Influence), stakeholder.Interest(s.Interest)
	sum := stakeholder.SummariseStored(influence, interest, StoredEngagements(s), s.CreatedAt, now)
	return StakeholderSummary{
		ID: s.ID, Name: s.Name, Role: s.Role, Influence: influence, Interest: interest,
		Quadrant: sum.Quadrant, Sentiment: sum.Sentiment, AtRisk: sum.AtRisk, AtRiskReason: sum.AtRiskReason,
	}
}

// StoredEngagements is what a stakeholder row keeps of its engagements.
func StoredEngagements(s dbsqlc.Stakeholder) stakeholder.Stored {
	recent := make([]stakeholder.Sentiment, len(s.RecentSentiments))
	for i, r := range s.RecentSentiments {
		recent[i] = stakeholder.Sentiment(r)
	}
	return stakeholder.Stored{Count: int(s.EngagementCount), LastOn: s.LastEngagementOn, Recent: recent}
}
