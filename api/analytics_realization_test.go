package api_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
)

// The at-risk rule reads each benefit's two latest actuals through the
// current month from its benefit_actual_stats row; a benefit whose latest
// actual lies after this month (a writer whose clock was ahead; the API
// itself refuses a future period) is read from its actuals instead, so the
// later one neither hides nor joins the two that put it at risk, and the
// like-for-like sums leave it out as they do everywhere (expected_to_date
// is the plan to date: 13 months of 100).
func TestRealizationAtRiskWithALaterActual(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "USD", "discount_rate": 0.10, "fiscal_year_start_month": 1}), 200)
	now := time.Now().UTC()
	month := func(add int) string {
		return time.Date(now.Year(), now.Month()+time.Month(add), 1, 0, 0, 0, 0, time.UTC).Format("2006-01")
	}
	in := ts.createInitiative(admin, map[string]any{"name": "Late"})
	id := ts.createBenefit(admin, map[string]any{"initiative_id": in, "name": "Savings", "category": "cost_savings", "expected_value": 1200,
		"currency": "USD", "unit": "currency", "measurement_frequency": "monthly", "expected_start_date": month(-12) + "-01"})
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+id+"/actuals", map[string]any{"value": 50, "period": month(-2)}), 201)
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+id+"/actuals", map[string]any{"value": 70, "period": month(-1)}), 201)
	err := db.InTenant(t.Context(), ts.pool, ts.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(t.Context(), `INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by) VALUES ($1, $2, $3::date, 100, 'clock-ahead')`,
			ts.tenant, id, month(2)+"-01")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r := ts.do(&admin, "GET", "/v1/analytics/realization?initiative_id="+in, nil)
	want := "total 1300/120/60; Late 1300/120/60; cost_savings 1300/120/60; at risk: Savings " + month(-2) + " 100/50/50 " + month(-1) + " 100/70/70; missing: []"
	if got := realizationSummary(t, r); got != want {
		t.Errorf("realization\n got %s\nwant %s", got, want)
	}
	r = ts.do(&admin, "GET", "/v1/analytics/realization", nil)
	if got := realizationSummary(t, r); got != want {
		t.Errorf("portfolio realization\n got %s\nwant %s", got, want)
	}
}
