package initiativevalue

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/stakeholder"
	"github.com/valuecase/valuecase/internal/valuation"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func ym(s string) finance.Month {
	m, err := finance.ParseMonth(s)
	if err != nil {
		panic(err)
	}
	return m
}

// goldenNow is "today" of the golden initiative: its current month is 2026-06.
var goldenNow = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)

// goldenRows is a small initiative whose figures are computed by hand below.
//
// Base currency USD. Benefits (expected_value is per year):
//
//	A  USD monthly   12,000/yr from 2026-01, open-ended, active   → 1,000 a month
//	   actuals 2026-01 900, 2026-02 1,100, 2026-03 1,000
//	B  EUR quarterly 40,000/yr 2026-01-10 .. 2026-12-31, achieved → 10,000 a quarter (in 01, 04, 07, 10)
//	   actuals 2026-01 9,000, 2026-04 10,500
//	C  USD monthly  120,000/yr from 2025-01, CANCELLED, actual 2025-01 10,000 → left out of every figure
//	D  hours monthly 500/yr (not money)                           → counted in benefits_count only
//	E  USD monthly  plan 2026-05: 500, 2026-07: 700 (2026-05 .. 2026-08) → 500 in 05, 0 in 06
//	   actual 2026-05 450
//
// Costs: 50,000 USD once 2026-01; 2,000 USD monthly 2026-01 .. 2026-12;
// 5,000 GBP annual from 2026-01, open-ended.
// FX (USD per unit): EUR 2026-01 1.10, 2026-04 1.08; GBP 2026-01 1.25, 2027-01 1.30, 2028-01 1.20.
//
// Hand calculation (current month 2026-06):
//
//	expected to date = A 1,000 × 6 (01..06)                         =  6,000
//	                 + B 10,000 × 1.10 (Q 2026-01) + 10,000 × 1.08 (Q 2026-04) = 21,800
//	                 + E 500 (05) + 0 (06)                            =    500
//	                                                                    28,300
//	realised to date = A 900 + 1,100 + 1,000                          =  3,000
//	                 + B 9,000 × 1.10 + 10,500 × 1.08 = 9,900 + 11,340 = 21,240
//	                 + E 450                                          =    450
//	                                                                    24,690
//	like for like: the expectation of the periods that have an actual
//	expected, measured = A 1,000 × 3 (01..03) + B 21,800 (both quarters) + E 500 (05) = 25,300
//	expected, not yet measured = A 1,000 × 3 (04..06) + E 0 (06)          =  3,000
//	realisation      = 24,690 / 25,300 × 100 = 97.5889328063...%
//	variance         = 24,690 − 25,300 = −610, −610 / 25,300 × 100 = −2.4110671936...%
//	(against every period to date, as before, the shortfall read 24,690 / 28,300 = 87.2 %)
//	horizon          = 2026-01 (earliest of A, B, E and the costs; not C, cancelled)
//	                   .. 2028-12 (open-ended A and the annual cost run 36 months)
//	total cost       = 50,000 + 12 × 2,000 + 5,000 × (1.25 + 1.30 + 1.20)
//	                 = 50,000 + 24,000 + 18,750 = 92,750
//
// Had the cancelled C counted, the horizon would start 2025-01 and end
// 2027-12, dropping the GBP charge of 2028-01 (total 86,750), and expected
// to date would gain 18 × 10,000.
func goldenRows() valuation.Rows {
	bA, bB, bC, bD, bE := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	usd, eur := new("USD"), new("EUR")
	actual := func(b uuid.UUID, period string, v float64) dbsqlc.BenefitActual {
		return dbsqlc.BenefitActual{BenefitID: b, Period: day(period + "-01"), Value: decimal.NewFromFloat(v)}
	}
	rate := func(cur, period string, r float64) dbsqlc.FxRate {
		return dbsqlc.FxRate{Currency: cur, Period: day(period + "-01"), Rate: decimal.NewFromFloat(r)}
	}
	return valuation.Rows{
		Settings: settings.Settings{BaseCurrency: "USD", DiscountRate: 0.08, FiscalYearStartMonth: 1},
		Benefits: []dbsqlc.Benefit{
			{ID: bA, Unit: "currency", Currency: usd, ExpectedValue: decimal.NewFromFloat(12_000), MeasurementFrequency: "monthly", ExpectedStartDate: day("2026-01-01"), Status: "active"},
			{ID: bB, Unit: "currency", Currency: eur, ExpectedValue: decimal.NewFromFloat(40_000), MeasurementFrequency: "quarterly", ExpectedStartDate: day("2026-01-10"), ExpectedEndDate: new(day("2026-12-31")), Status: "achieved"},
			{ID: bC, Unit: "currency", Currency: usd, ExpectedValue: decimal.NewFromFloat(120_000), MeasurementFrequency: "monthly", ExpectedStartDate: day("2025-01-01"), Status: "cancelled"},
			{ID: bD, Unit: "hours", ExpectedValue: decimal.NewFromFloat(500), MeasurementFrequency: "monthly", ExpectedStartDate: day("2026-01-01"), Status: "active"},
			{ID: bE, Unit: "currency", Currency: usd, ExpectedValue: decimal.NewFromFloat(9_999), MeasurementFrequency: "monthly", ExpectedStartDate: day("2026-05-01"), ExpectedEndDate: new(day("2026-08-31")), Status: "active"},
		},
		Plans: []dbsqlc.BenefitPlanEntry{{BenefitID: bE, Period: day("2026-05-01"), Expected: decimal.NewFromFloat(500)}, {BenefitID: bE, Period: day("2026-07-01"), Expected: decimal.NewFromFloat(700)}},
		Actuals: []dbsqlc.BenefitActual{
			actual(bA, "2026-01", 900), actual(bA, "2026-02", 1_100), actual(bA, "2026-03", 1_000),
			actual(bB, "2026-01", 9_000), actual(bB, "2026-04", 10_500),
			actual(bC, "2025-01", 10_000),
			actual(bE, "2026-05", 450),
		},
		Costs: []dbsqlc.InitiativeCost{
			{Amount: decimal.NewFromFloat(50_000), Currency: "USD", Recurrence: "once", Period: day("2026-01-01"), Category: "capex"},
			{Amount: decimal.NewFromFloat(2_000), Currency: "USD", Recurrence: "monthly", Period: day("2026-01-01"), EndPeriod: new(day("2026-12-01")), Category: "opex"},
			{Amount: decimal.NewFromFloat(5_000), Currency: "GBP", Recurrence: "annual", Period: day("2026-01-01"), Category: "opex"},
		},
		Rates: []dbsqlc.FxRate{
			rate("EUR", "2026-01", 1.10), rate("EUR", "2026-04", 1.08),
			rate("GBP", "2026-01", 1.25), rate("GBP", "2027-01", 1.30), rate("GBP", "2028-01", 1.20),
			rate("USD", "2026-01", 0.5), // a stray rate for the base itself is never used
		},
	}
}

func without(rates []dbsqlc.FxRate, cur, period string) []dbsqlc.FxRate {
	return slices.DeleteFunc(slices.Clone(rates), func(r dbsqlc.FxRate) bool {
		return r.Currency == cur && r.Period.Equal(day(period+"-01"))
	})
}

func TestComputeGolden(t *testing.T) {
	full := goldenRows()
	noGBP2027 := goldenRows()
	noGBP2027.Rates = without(noGBP2027.Rates, "GBP", "2027-01")
	noEUR2026Q2 := goldenRows()
	noEUR2026Q2.Rates = without(noEUR2026Q2.Rates, "EUR", "2026-04")

	cases := []struct {
		name                              string
		rows                              valuation.Rows
		now                               time.Time
		expected, realized, percent, cost *float64 // nil: the figure must be null
		measured, unmeasured, variance    *float64
		missing                           []finance.MissingRate
	}{
		{"every rate present", full, goldenNow, new(28_300.0), new(24_690.0), new(97.58893280632411), new(92_750.0), new(25_300.0), new(3_000.0), new(-610.0), nil},
		// Seen in March 2026: A 1,000 × 3 + B 10,000 × 1.10 + E nothing yet = 14,000 expected;
		// realised A 3,000 + B 9,000 × 1.10 = 12,900 (the April and May actuals lie after
		// the current month); 12,900 / 14,000 × 100 = 92.142857...%. The cost does not move.
		{"seen in March", full, time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC), new(14_000.0), new(12_900.0), new(92.14285714285714), new(92_750.0), new(14_000.0), new(0.0), new(-1_100.0), nil},
		// The 2027 GBP charge cannot be converted: total cost is null, the to-date figures are whole.
		{"GBP 2027-01 missing", noGBP2027, goldenNow, new(28_300.0), new(24_690.0), new(97.58893280632411), nil, new(25_300.0), new(3_000.0), new(-610.0),
			[]finance.MissingRate{{Currency: "GBP", Period: ym("2027-01")}}},
		// B's second quarter (expected 10,000 and actual 10,500 EUR, measured) cannot be
		// converted: the measured figures, the plan to date and the realisation are null;
		// what is not yet measured (A's 3,000) needs no EUR rate and stays; the cost is whole.
		{"EUR 2026-04 missing", noEUR2026Q2, goldenNow, nil, nil, nil, new(92_750.0), nil, new(3_000.0), nil,
			[]finance.MissingRate{{Currency: "EUR", Period: ym("2026-04")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Compute(c.rows, c.now)
			if err != nil {
				t.Fatal(err)
			}
			m := d.Metrics
			for _, f := range []struct {
				name string
				got  *decimal.Decimal
				want *float64
			}{
				{"expected_value_to_date", m.ExpectedToDate, c.expected},
				{"realized_value_to_date", m.RealizedToDate, c.realized},
				{"realization_percent", m.RealizationPercent, c.percent},
				{"total_cost", m.TotalCost, c.cost},
				{"expected_measured_to_date", m.ExpectedMeasured, c.measured},
				{"expected_unmeasured_to_date", m.ExpectedUnmeasured, c.unmeasured},
				{"variance", m.Variance, c.variance},
			} {
				if (f.got == nil) != (f.want == nil) || (f.got != nil && math.Abs(f.got.InexactFloat64()-*f.want) > 1e-9) {
					t.Errorf("%s = %v, want %v", f.name, show(f.got), show(f.want))
				}
			}
			if want := c.missing; !slices.Equal(m.MissingFXRates, want) || m.MissingFXRates == nil {
				t.Errorf("missing_fx_rates = %v, want %v (never nil)", m.MissingFXRates, want)
			}
			if m.BenefitsCount != 5 || m.BaseCurrency != "USD" {
				t.Errorf("benefits_count %d, base %s", m.BenefitsCount, m.BaseCurrency)
			}
		})
	}
}

func show[T any](v *T) any {
	if v == nil {
		return "null"
	}
	return *v
}

// The range of rates Load reads covers the horizon and the to-date months.
func TestRatePeriods(t *testing.T) {
	r := goldenRows()
	from, to, ok := ratePeriods(valuation.MoneyBenefits(r), valuation.Costs(r), goldenNow)
	if !ok || from != ym("2026-01") || to != ym("2028-12") {
		t.Errorf("golden: %v..%v %v, want 2026-01..2028-12", from, to, ok)
	}
	// An initiative whose horizon ended before today: the range still runs to the
	// current month, the end of the to-date window.
	short := valuation.Rows{Costs: []dbsqlc.InitiativeCost{{Amount: decimal.NewFromFloat(1), Currency: "EUR", Recurrence: "once", Period: day("2024-03-01")}}}
	from, to, ok = ratePeriods(valuation.MoneyBenefits(short), valuation.Costs(short), goldenNow)
	if !ok || from != ym("2024-03") || to != ym("2026-06") {
		t.Errorf("past initiative: %v..%v %v", from, to, ok)
	}
	if _, _, ok := ratePeriods(nil, nil, goldenNow); ok {
		t.Error("nothing to convert needs no rates")
	}
}

func TestComputeEmptyAndFuture(t *testing.T) {
	d, err := Compute(valuation.Rows{Settings: settings.Defaults}, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	m := d.Metrics
	if !m.ExpectedToDate.IsZero() || !m.RealizedToDate.IsZero() || m.RealizationPercent != nil || !m.TotalCost.IsZero() ||
		m.BenefitsCount != 0 || m.StakeholdersCount != 0 || len(m.MissingFXRates) != 0 || m.MissingFXRates == nil || len(d.Stakeholders) != 0 {
		t.Errorf("empty initiative: %+v", d)
	}
	// A benefit starting next month expects nothing to date: 0, and no division by it.
	future := valuation.Rows{Settings: settings.Defaults, Benefits: []dbsqlc.Benefit{
		{ID: uuid.New(), Unit: "currency", Currency: new("EUR"), ExpectedValue: decimal.NewFromFloat(1200), MeasurementFrequency: "monthly", ExpectedStartDate: day("2026-07-01"), Status: "active"},
	}}
	d, _ = Compute(future, goldenNow)
	if !d.Metrics.ExpectedToDate.IsZero() || !d.Metrics.RealizedToDate.IsZero() || d.Metrics.RealizationPercent != nil || len(d.Metrics.MissingFXRates) != 0 {
		t.Errorf("future benefit: %+v", d.Metrics)
	}
}

func TestStakeholderEntries(t *testing.T) {
	created := day("2026-01-01")
	rows := valuation.Rows{Settings: settings.Defaults, Stakeholders: []dbsqlc.Stakeholder{
		// powerful, latest engagement negative → negative_sentiment
		{Name: "Ada", Influence: "critical", Interest: "high", RecentSentiments: []string{"negative", "positive"}, LastEngagementOn: new(day("2026-06-01")), CreatedAt: created},
		// little power, engaged recently and positive → not at risk
		{Name: "Ben", Influence: "low", Interest: "high", RecentSentiments: []string{"positive"}, LastEngagementOn: new(day("2026-06-10")), CreatedAt: created},
		// powerful, never engaged, created 75 days before now → not_engaged
		{Name: "Cy", Influence: "high", Interest: "low", RecentSentiments: []string{}, CreatedAt: day("2026-04-01")},
		// medium influence: positive → neutral → negative, latest negative → declining_sentiment
		{Name: "Di", Influence: "medium", Interest: "medium", RecentSentiments: []string{"negative", "neutral", "positive"}, LastEngagementOn: new(day("2026-06-12")), CreatedAt: created},
		// powerful, last engaged 2026-05-01 = 45 days before 2026-06-15, positive → not at risk (45 still counts)
		{Name: "Ed", Influence: "high", Interest: "high", RecentSentiments: []string{"positive"}, LastEngagementOn: new(day("2026-05-01")), CreatedAt: created},
	}}
	d, err := Compute(rows, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		quadrant  stakeholder.Quadrant
		sentiment string
		reason    stakeholder.RiskReason
	}
	wants := []want{
		{stakeholder.ManageClosely, "negative", stakeholder.NegativeSentiment},
		{stakeholder.KeepInformed, "positive", ""},
		{stakeholder.KeepSatisfied, "", stakeholder.NotEngaged},
		{stakeholder.Monitor, "negative", stakeholder.DecliningSentiment},
		{stakeholder.ManageClosely, "positive", ""},
	}
	for i, w := range wants {
		s := d.Stakeholders[i]
		sentiment := ""
		if s.Sentiment != nil {
			sentiment = string(*s.Sentiment)
		}
		var reason stakeholder.RiskReason
		if s.AtRiskReason != nil {
			reason = *s.AtRiskReason
		}
		if s.Name != rows.Stakeholders[i].Name || s.Quadrant != w.quadrant || sentiment != w.sentiment || s.AtRisk != (w.reason != "") || reason != w.reason {
			t.Errorf("%s: quadrant %s sentiment %q at risk %v (%s); want %s %q %q", s.Name, s.Quadrant, sentiment, s.AtRisk, reason, w.quadrant, w.sentiment, w.reason)
		}
	}
	if d.Metrics.StakeholdersCount != 5 || d.Metrics.StakeholdersAtRisk != 3 {
		t.Errorf("count %d, at risk %d; want 5, 3", d.Metrics.StakeholdersCount, d.Metrics.StakeholdersAtRisk)
	}
}
