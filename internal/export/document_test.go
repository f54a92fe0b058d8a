package export

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/demo"
	"github.com/valuecase/valuecase/internal/render"
)

// demoDocument is the document of the demo seed's approved case at asOf,
// as the approval freezes it.
func demoDocument(t *testing.T, asOf time.Time) *render.Case {
	t.Helper()
	s, err := demo.Default().StoredCase("Cloud migration", 0, asOf)
	if err != nil {
		t.Fatal(err)
	}
	snap, _, err := businesscase.Figures(s.Rows, asOf, false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Build(s.Case, s.Initiative, s.Rows, s.Projects, snap)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The demo's Cloud migration, seeded at 30 Jun 2026: history starts in the
// quarter 18 months back, Oct 2024; the horizon is the 36 months an
// open-ended item runs, Oct 2024 – Sep 2027. Worked by hand:
//
//	benefit: USD 1,200,000 a year, monthly → 100,000 a month × 36 = 3,600,000
//	costs: 1,500,000 once (Oct 2024) + 25,000 × 36 = 2,400,000
//	ROI = 1,200,000 ÷ 2,400,000 = 50 %
//	best  (1.2 × 3.6m − 0.9 × 2.4m) ÷ (0.9 × 2.4m) = 2.16m ÷ 2.16m = 100 %
//	worst (0.8 × 3.6m − 1.1 × 2.4m) ÷ (1.1 × 2.4m) = 0.24m ÷ 2.64m = 9.09 %
//	cumulative: −1,425,000 after month 1, +75,000 a month after → 0 after
//	month 20 (May 2026): payback 20 months, index 19
//	quarters: 12 (Q4 2024 … Q3 2027) of 300,000 expected; the seed records
//	18 monthly actuals from its first month, Oct 2024 … Mar 2026, so Q4
//	2024 … Q1 2026 have an actual, Q2 2026 onwards none (a gap, not a 0)
//	Q4 2024 actual = Σ the seed's first three actuals (demo.Benefit.Actual)
func TestDocumentOfTheDemoCase(t *testing.T) {
	asOf := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	c := demoDocument(t, asOf)
	near := func(got *float64, want float64, what string) {
		t.Helper()
		if got == nil || math.Abs(*got-want) > 0.005 {
			t.Errorf("%s = %v, want %.2f", what, got, want)
		}
	}
	near(c.Figures.ROIPercent.Value, 50, "ROI")
	near(c.Sensitivity.BestROIPercent.Value, 100, "best case ROI")
	near(c.Sensitivity.WorstROIPercent.Value, 9.09, "worst case ROI")
	near(c.Figures.PaybackMonths.Value, 20, "payback")
	if c.Figures.HorizonMonths != 36 || len(c.CashFlow.Months) != 36 || c.CashFlow.Months[0].Label != "Oct 2024" {
		t.Fatalf("horizon %d, %d months from %v", c.Figures.HorizonMonths, len(c.CashFlow.Months), c.CashFlow.Months[0].Label)
	}
	if pm := c.CashFlow.PaybackMonth; pm == nil || *pm != 19 || c.CashFlow.Months[19].Label != "May 2026" || c.CashFlow.Months[19].Cumulative != 0 {
		t.Errorf("payback month %v", pm)
	}
	if m := c.CashFlow.Months[0]; m.Benefits != 100000 || m.Costs != 1525000 || m.Cumulative != -1425000 {
		t.Errorf("first month %+v", m)
	}
	if last := c.CashFlow.Months[35]; last.Cumulative != 1200000 {
		t.Errorf("last cumulative %v, want 1,200,000", last.Cumulative)
	}
	if len(c.Periods) != 12 || c.Periods[0].Label != "Q4 2024" || c.Periods[11].Label != "Q3 2027" {
		t.Fatalf("periods %+v", c.Periods)
	}
	b := demo.Default().Initiatives[0].Benefits[0]
	near(c.Periods[0].Actual, b.Actual(0)+b.Actual(1)+b.Actual(2), "Q4 2024 actual")
	near(c.Periods[5].Actual, b.Actual(15)+b.Actual(16)+b.Actual(17), "Q1 2026 actual")
	for i, p := range c.Periods {
		if p.Expected != 300000 || (i > 5) != (p.Actual == nil) {
			t.Errorf("period %s: expected %v, actual %v", p.Label, p.Expected, p.Actual)
		}
	}
	if len(c.Stakeholders) != 4 || c.Approval == nil || c.Approval.Level != "board" || c.ContentHash == "" {
		t.Errorf("stakeholders %d, approval %+v, hash %q", len(c.Stakeholders), c.Approval, c.ContentHash)
	}
	// The latest engagement's sentiment (Jonas Meyer's is the outage post-mortem, 5 days before).
	if st := c.Stakeholders[1]; st.Name != "Jonas Meyer" || st.Sentiment != "negative" || st.Quadrant != render.ManageClosely {
		t.Errorf("stakeholder %+v", st)
	}
	// The appendix names every input: both benefits, both costs; the
	// case is in USD only, so none of the tenant's CHF and EUR rates.
	names := map[string]bool{}
	for _, k := range c.Calculations {
		names[k.Name] = true
	}
	for _, n := range []string{"Net present value", "Payback", "Sensitivity, best case", "Input: benefit Data-centre cost savings",
		"Input: benefit Engineering hours freed", "Input: cost Migration programme", "Input: cost Cloud run cost"} {
		if !names[n] {
			t.Errorf("appendix lacks %q", n)
		}
	}
	if names["Input: exchange rates"] {
		t.Error("the appendix of a USD-only case lists exchange rates")
	}
}

// make samples is reproducible: the same as-of gives the same bytes.
func TestDemoSamplesAreReproducible(t *testing.T) {
	asOf := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	opts := render.Options{IncludeAppendices: true, Watermark: "CONFIDENTIAL", GeneratedAt: asOf.Add(24 * time.Hour)}
	for _, f := range render.Formats {
		var a, b bytes.Buffer
		if err := render.Render(context.Background(), &a, f, demoDocument(t, asOf), opts); err != nil {
			t.Fatal(err)
		}
		if err := render.Render(context.Background(), &b, f, demoDocument(t, asOf), opts); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s differs between two renders of the same snapshot", f)
		}
	}
}
