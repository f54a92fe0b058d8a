package export

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/render"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/valuation"
)

func month(y int, m time.Month) time.Time { return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC) }

// The document's benefit and cost tables are in the base currency (USD here)
// and add up to what the figures say. Worked by hand:
//   - "Savings" USD 12,000 a year, monthly, from 2026-01; through 2026-03 it
//     expects 3 x 1,000 = 3,000; actuals 900 + 1,100 = 2,000; variance -1,000,
//     -33.33 %.
//   - "Hours freed" (unit hours) never enters the USD columns; "Licences
//     saved" is in EUR with no rate for its months: left out, not added raw.
//   - Costs over the horizon 2026-01..2026-06: EUR 50,000 once in 2026-01 at
//     1.10 = 55,000; USD 100 monthly = 600; GBP 10 once with no rate: left out.
func TestTablesAreInTheBaseCurrency(t *testing.T) {
	usd, eur, gbp := "USD", "EUR", "GBP"
	savings, hours, licences := uuid.New(), uuid.New(), uuid.New()
	rows := valuation.Rows{
		Settings: settings.Settings{BaseCurrency: "USD", DiscountRate: 0.08, FiscalYearStartMonth: 1},
		Benefits: []dbsqlc.Benefit{
			{ID: savings, Name: "Savings", Category: "cost_savings", Unit: "currency", Currency: &usd, Status: "active",
				ExpectedValue: decimal.NewFromFloat(12000), MeasurementFrequency: "monthly", ExpectedStartDate: month(2026, 1)},
			{ID: hours, Name: "Hours freed", Category: "productivity", Unit: "hours", Status: "active",
				ExpectedValue: decimal.NewFromFloat(9600), MeasurementFrequency: "monthly", ExpectedStartDate: month(2026, 1)},
			{ID: licences, Name: "Licences saved", Category: "cost_savings", Unit: "currency", Currency: &eur, Status: "active",
				ExpectedValue: decimal.NewFromFloat(1200), MeasurementFrequency: "monthly", ExpectedStartDate: month(2026, 1)},
		},
		Actuals: []dbsqlc.BenefitActual{
			{BenefitID: savings, Period: month(2026, 1), Value: decimal.NewFromFloat(900)},
			{BenefitID: savings, Period: month(2026, 2), Value: decimal.NewFromFloat(1100)},
			{BenefitID: hours, Period: month(2026, 1), Value: decimal.NewFromFloat(700)},
		},
		Costs: []dbsqlc.InitiativeCost{
			{Name: "Migration", Category: "capex", Amount: decimal.NewFromFloat(50000), Currency: eur, Period: month(2026, 1), Recurrence: "once"},
			{Name: "Support", Category: "opex", Amount: decimal.NewFromFloat(100), Currency: usd, Period: month(2026, 1), Recurrence: "monthly"},
			{Name: "Fees", Category: "opex", Amount: decimal.NewFromFloat(10), Currency: gbp, Period: month(2026, 2), Recurrence: "once"},
		},
		Rates: []dbsqlc.FxRate{{Currency: eur, Period: month(2026, 1), Rate: decimal.NewFromFloat(1.10)}},
	}
	fx, err := valuation.FX("USD", rows.Rates)
	if err != nil {
		t.Fatal(err)
	}

	// Like for like: Savings expects 1,000 a month; January and February are
	// measured (900 + 1,100 against 2,000: no variance), March is not yet, so
	// its 1,000 is shown apart, not as a −1,000 (−33 %) shortfall.
	benefits, total := benefitRows(rows, fx, finance.MonthOf(2026, time.March))
	if len(benefits) != 1 {
		t.Fatalf("benefit rows %+v, want only Savings", benefits)
	}
	b := benefits[0]
	if b.Name != "Savings" || b.Expected != 2000 || b.Unmeasured != 1000 || b.Actual == nil || *b.Actual != 2000 || *b.Variance != 0 ||
		b.VariancePercent == nil || *b.VariancePercent != 0 {
		t.Errorf("Savings row %+v (actual %v, variance %v, %v %%)", b, deref(b.Actual), deref(b.Variance), deref(b.VariancePercent))
	}
	if total != nil {
		t.Errorf("total %+v, want none: the EUR benefit has no rate, a partial total would mislead", total)
	}

	snap := businesscase.Snapshot{HorizonStart: new("2026-01"), HorizonEnd: new("2026-06")}
	costs := costRows(rows, fx, snap)
	want := []render.Cost{
		{Name: "Migration", Category: "capex", Timing: "once", Amount: 55000},
		{Name: "Support", Category: "opex", Timing: "monthly", Amount: 600},
	}
	if len(costs) != len(want) {
		t.Fatalf("cost rows %+v, want %+v", costs, want)
	}
	for i := range want {
		if costs[i].Name != want[i].Name || costs[i].Timing != want[i].Timing || costs[i].Amount < want[i].Amount-1e-6 || costs[i].Amount > want[i].Amount+1e-6 {
			t.Errorf("cost row %d: %+v, want %+v", i, costs[i], want[i])
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestCashFlowTableFoots: USD 1,000,000 a year over 36 months is
// 83,333.33… a month. The shown months add to the shown total (not
// 2,999,999.88 under 3,000,000.00), the net is the shown benefits less the
// shown costs, and the cumulative is the running sum of the shown net.
func TestCashFlowTableFoots(t *testing.T) {
	cf := finance.CashFlows{Start: finance.MonthOf(2027, time.January)}
	month := decimal.NewFromInt(1_000_000).Div(decimal.NewFromInt(12))
	cost := decimal.NewFromInt(100_000).Div(decimal.NewFromInt(3))
	for range 36 {
		cf.Benefits = append(cf.Benefits, month)
		cf.Costs = append(cf.Costs, cost)
	}
	out := cashFlowMonths(cf, nil, "USD")
	cents := func(v float64) int64 { return int64(math.Round(v * 100)) }
	var b, c, running int64
	for i, m := range out.Months {
		b, c = b+cents(m.Benefits), c+cents(m.Costs)
		if cents(m.Net) != cents(m.Benefits)-cents(m.Costs) {
			t.Errorf("month %d: net %v ≠ %v − %v", i+1, m.Net, m.Benefits, m.Costs)
		}
		running += cents(m.Net)
		if cents(m.Cumulative) != running {
			t.Errorf("month %d: cumulative %v, running sum of the net %v", i+1, m.Cumulative, float64(running)/100)
		}
	}
	if b != 300_000_000 || c != 120_000_000 {
		t.Errorf("shown months add to %v and %v, want 3,000,000.00 and 1,200,000.00", float64(b)/100, float64(c)/100)
	}
	if out.Months[0].Label != "Jan 2027" {
		t.Errorf("month label %q", out.Months[0].Label)
	}
}

// A file is served only once its export succeeded and until it expires; a
// refusal carries the reason the client is shown.
func TestCheckDownload(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Minute), now.Add(time.Hour)
	tests := []struct {
		status  Status
		expires *time.Time
		reason  string // "": served
	}{
		{Succeeded, &future, ""},
		{Succeeded, nil, ""},
		{Running, nil, "the export is running; download it once it has succeeded"},
		{Failed, nil, "the export is failed; download it once it has succeeded"},
		{Succeeded, &past, "the file expired at 2026-05-01T11:59:00Z; request a new export"},
	}
	for _, tc := range tests {
		err := CheckDownload(tc.status, tc.expires, now)
		if tc.reason == "" {
			if err != nil {
				t.Errorf("%s: %v, want served", tc.status, err)
			}
			continue
		}
		notReady, ok := errors.AsType[*NotReadyError](err)
		if !ok || notReady.Reason != tc.reason {
			t.Errorf("%s: %v, want a NotReadyError %q", tc.status, err, tc.reason)
		}
	}
}
