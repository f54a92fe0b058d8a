package api_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/analytics"
)

// The analytics endpoints answer from the report cache (the JSON body kept
// per tenant data version) exactly what they compute without it: after each
// write through the API (an actual filed, the base currency changed, a
// benefit created) every endpoint's body equals the body computed with the cache
// off, and differs from the one before where the write changes it.
func TestAnalyticsCacheAnswersEveryWrite(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	now := time.Now().UTC()
	month := func(add int) string {
		return time.Date(now.Year(), now.Month()+time.Month(add), 1, 0, 0, 0, 0, time.UTC).Format("2006-01")
	}
	in := ts.createInitiative(admin, map[string]any{"name": "Cached"})
	id := ts.createBenefit(admin, map[string]any{"initiative_id": in, "name": "Savings", "category": "cost_savings", "expected_value": 1200,
		"currency": "USD", "unit": "currency", "measurement_frequency": "monthly", "expected_start_date": month(-6) + "-01"})
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+id+"/actuals", map[string]any{"value": 50, "period": month(-2)}), 201)
	paths := []string{"/v1/analytics/realization", "/v1/analytics/realization?initiative_id=" + in, "/v1/analytics/roi",
		"/v1/analytics/trends?from=" + month(-6) + "&to=" + month(6), "/v1/analytics/forecasts?group_by=benefit"}
	read := func(step string) [][]byte {
		t.Helper()
		var out [][]byte
		for _, p := range paths {
			first, again := ts.do(&admin, "GET", p, nil), ts.do(&admin, "GET", p, nil)
			expect(t, first, 200)
			analytics.SetCacheBytes(0)
			fresh := ts.do(&admin, "GET", p, nil)
			analytics.SetCacheBytes(analytics.DefaultCacheBytes)
			if !bytes.Equal(first.body, fresh.body) || !bytes.Equal(again.body, fresh.body) {
				t.Errorf("%s: GET %s cached\n%s\nfresh\n%s", step, p, again.body, fresh.body)
			}
			out = append(out, first.body)
		}
		return out
	}
	before := read("initial")
	for _, w := range []struct {
		step, method, path string
		body               map[string]any
	}{
		{"actual filed", "POST", "/v1/benefits/" + id + "/actuals", map[string]any{"value": 70, "period": month(-1)}},
		{"base currency changed", "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.10, "fiscal_year_start_month": 1}},
		{"benefit created", "POST", "/v1/benefits", map[string]any{"initiative_id": in, "name": "Revenue", "category": "revenue_growth", "expected_value": 2400,
			"currency": "USD", "unit": "currency", "measurement_frequency": "monthly", "expected_start_date": month(-3) + "-01"}},
	} {
		r := ts.do(&admin, w.method, w.path, w.body)
		if r.status >= 300 {
			t.Fatalf("%s: %d %s", w.step, r.status, r.body)
		}
		after := read(w.step)
		if bytes.Equal(after[0], before[0]) {
			t.Errorf("%s: the portfolio realisation is the one before the write: %s", w.step, after[0])
		}
		before = after
	}
}
