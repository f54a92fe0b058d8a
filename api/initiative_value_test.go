package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// TestInitiativeDetailValue: GET /v1/initiatives/{id} computes the value
// figures from what the costs, settings and FX routes stored and from
// benefits, actuals and stakeholders stored directly (their own routes are
// tested with them). All periods lie in 2024, so "to date" covers them all
// whatever day the test runs.
//
// Base currency EUR. FX (EUR per unit): USD 2024-01 0.90, 2024-04 0.92; GBP 2024-02 1.15.
//
//	benefit 1  EUR monthly   12,000/yr 2024-01-01 .. 2024-12-31   expected 12 × 1,000 = 12,000
//	           actuals 2024-01 800, 2024-02 1,200                 realised 2,000
//	benefit 2  USD quarterly  8,000/yr 2024-01-01 .. 2024-06-30   expected 2,000 × 0.90 + 2,000 × 0.92 = 3,640
//	           actual 2024-01 2,500                               realised 2,500 × 0.90 = 2,250
//	benefit 3  EUR monthly  100,000/yr, cancelled, actual 2024-01 9,999: in no money figure
//	benefit 4  hours, not money: counted in benefits_count only
//	expected 15,640; realised 4,250. Like for like, against the periods with an actual
//	(benefit 1: 2024-01, 02 = 2,000; benefit 2: Q1 = 1,800): expected measured 3,800,
//	not yet measured 15,640 − 3,800 = 11,840; variance 4,250 − 3,800 = 450,
//	450 / 3,800 × 100 = 11.8421…% → 11.84; realisation 4,250 / 3,800 × 100 → 111.84
//	(against all 15,640 it read 27.17 %: every unmeasured month counted as a shortfall)
//	costs      10,000 EUR once 2024-01; 100 GBP monthly 2024-02 .. 2024-03
//	           GBP 2024-03 has no rate at first: total_cost null, missing [GBP 2024-03];
//	           with 1.20 entered: 10,000 + 100 × 1.15 + 100 × 1.20 = 10,235
func TestInitiativeDetailValue(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	ctx := context.Background()
	id := ts.createInitiative(admin, map[string]any{"name": "Valued"})
	path := "/v1/initiatives/" + id

	// A fresh initiative: zeros, nothing missing, the default base.
	r := ts.do(&admin, "GET", path, nil)
	expect(t, r, 200)
	m := r.json(t)["metrics"].(map[string]any)
	if m["benefits_count"] != 0.0 || m["expected_value_to_date"] != 0.0 || m["realized_value_to_date"] != 0.0 || m["realization_percent"] != nil ||
		m["total_cost"] != 0.0 || m["base_currency"] != "USD" || len(m["missing_fx_rates"].([]any)) != 0 || len(r.json(t)["stakeholders"].([]any)) != 0 {
		t.Fatalf("empty initiative: %s", r.body)
	}

	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR"}), 200)
	expect(t, ts.do(&admin, "PUT", "/v1/settings/fx-rates", map[string]any{"rates": []map[string]any{
		{"currency": "USD", "period": "2024-01", "rate": 0.90}, {"currency": "USD", "period": "2024-04", "rate": 0.92},
		{"currency": "GBP", "period": "2024-02", "rate": 1.15},
	}}), 200)
	expect(t, ts.do(&admin, "POST", path+"/costs", map[string]any{"name": "Build", "category": "capex", "amount": 10_000, "currency": "EUR", "period": "2024-01"}), 201)
	expect(t, ts.do(&admin, "POST", path+"/costs", map[string]any{"name": "Hosting", "category": "opex", "amount": 100, "currency": "GBP", "period": "2024-02",
		"recurrence": "monthly", "end_period": "2024-03"}), 201)

	initiative := uuid.MustParse(id)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		benefit := func(name, unit string, currency *string, freq string, value float64, start string, end *string, status string) uuid.UUID {
			p := dbsqlc.BenefitCreateParams{TenantID: ts.tenant, InitiativeID: initiative, Name: name, Category: "cost_savings", ExpectedValue: decimal.NewFromFloat(value),
				Currency: currency, Unit: unit, MeasurementFrequency: freq, ExpectedStartDate: date(t, start), Status: status, OwnerID: "admin-1"}
			if end != nil {
				p.ExpectedEndDate = new(date(t, *end))
			}
			b, err := db.Q.BenefitCreate(ctx, tx, p)
			if err != nil {
				t.Fatal(err)
			}
			return b.ID
		}
		actual := func(b uuid.UUID, period string, v float64) {
			if _, err := db.Q.ActualCreate(ctx, tx, dbsqlc.ActualCreateParams{TenantID: ts.tenant, BenefitID: b, Period: date(t, period+"-01"), Value: decimal.NewFromFloat(v), RecordedBy: "admin-1"}); err != nil {
				t.Fatal(err)
			}
		}
		b1 := benefit("Savings", "currency", new("EUR"), "monthly", 12_000, "2024-01-01", new("2024-12-31"), "active")
		actual(b1, "2024-01", 800)
		actual(b1, "2024-02", 1_200)
		b2 := benefit("US revenue", "currency", new("USD"), "quarterly", 8_000, "2024-01-01", new("2024-06-30"), "achieved")
		actual(b2, "2024-01", 2_500)
		b3 := benefit("Dropped", "currency", new("EUR"), "monthly", 100_000, "2024-01-01", nil, "cancelled")
		actual(b3, "2024-01", 9_999)
		benefit("Hours saved", "hours", nil, "monthly", 500, "2024-01-01", nil, "active")

		stakeholder := func(name, influence, interest string, sentiments ...string) {
			s, err := db.Q.StakeholderCreate(ctx, tx, dbsqlc.StakeholderCreateParams{TenantID: ts.tenant, InitiativeID: initiative, Name: name,
				Email: name + "@example.com", Role: new("Sponsor"), Influence: influence, Interest: interest})
			if err != nil {
				t.Fatal(err)
			}
			for i, sentiment := range sentiments { // one a day, the last today
				if _, err := db.Q.EngagementCreate(ctx, tx, dbsqlc.EngagementCreateParams{TenantID: ts.tenant, StakeholderID: s.ID, Type: "meeting",
					Date: today.AddDate(0, 0, i+1-len(sentiments)), Sentiment: sentiment, RecordedBy: "admin-1"}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Q.StakeholdersRefreshEngagementSummary(ctx, tx, dbsqlc.StakeholdersRefreshEngagementSummaryParams{TenantID: ts.tenant, Ids: []uuid.UUID{s.ID}}); err != nil {
				t.Fatal(err)
			}
		}
		stakeholder("ada", "critical", "high", "positive", "negative") // latest negative, powerful: at risk
		stakeholder("bo", "low", "low", "positive")                    // fine
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	r = ts.do(&admin, "GET", path, nil)
	expect(t, r, 200)
	body := r.json(t)
	m = body["metrics"].(map[string]any)
	if m["benefits_count"] != 4.0 || m["expected_value_to_date"] != 15_640.0 || m["realized_value_to_date"] != 4_250.0 || m["realization_percent"] != 111.84 ||
		m["expected_measured_to_date"] != 3_800.0 || m["expected_unmeasured_to_date"] != 11_840.0 || m["variance"] != 450.0 || m["variance_percent"] != 11.84 ||
		m["total_cost"] != nil || m["base_currency"] != "EUR" || m["stakeholders_count"] != 2.0 || m["stakeholders_at_risk"] != 1.0 {
		t.Errorf("metrics with GBP 2024-03 missing: %v", m)
	}
	if miss := m["missing_fx_rates"].([]any); len(miss) != 1 || miss[0].(map[string]any)["currency"] != "GBP" || miss[0].(map[string]any)["period"] != "2024-03" {
		t.Errorf("missing_fx_rates = %v, want [GBP 2024-03]", miss)
	}
	ss := body["stakeholders"].([]any)
	if len(ss) != 2 {
		t.Fatalf("stakeholders: %v", ss)
	}
	ada, bo := ss[0].(map[string]any), ss[1].(map[string]any)
	if ada["name"] != "ada" || ada["quadrant"] != "manage_closely" || ada["sentiment"] != "negative" || ada["at_risk"] != true || ada["role"] != "Sponsor" ||
		bo["name"] != "bo" || bo["quadrant"] != "monitor" || bo["sentiment"] != "positive" || bo["at_risk"] != false {
		t.Errorf("stakeholders: %v", ss)
	}

	expect(t, ts.do(&admin, "PUT", "/v1/settings/fx-rates", map[string]any{"rates": []map[string]any{{"currency": "GBP", "period": "2024-03", "rate": 1.20}}}), 200)
	r = ts.do(&admin, "GET", path, nil)
	m = r.json(t)["metrics"].(map[string]any)
	if m["total_cost"] != 10_235.0 || len(m["missing_fx_rates"].([]any)) != 0 || m["expected_value_to_date"] != 15_640.0 {
		t.Errorf("with every rate: %v", m)
	}

	// A new base currency clears the rates: the EUR benefits now need EUR rates.
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "USD"}), 200)
	r = ts.do(&admin, "GET", path, nil)
	m = r.json(t)["metrics"].(map[string]any)
	if m["base_currency"] != "USD" || m["expected_value_to_date"] != nil || m["realized_value_to_date"] != nil || m["realization_percent"] != nil || m["total_cost"] != nil {
		t.Errorf("after the base change: %v", m)
	}
	var months []string
	for _, x := range m["missing_fx_rates"].([]any) {
		months = append(months, x.(map[string]any)["currency"].(string)+" "+x.(map[string]any)["period"].(string))
	}
	// EUR for every month of benefit 1 (01..12) and the cost (01); GBP for the hosting months.
	if len(months) != 14 || months[0] != "EUR 2024-01" || months[11] != "EUR 2024-12" || months[12] != "GBP 2024-02" || months[13] != "GBP 2024-03" {
		t.Errorf("missing after the base change: %v", months)
	}

	// Another tenant cannot read the initiative at all.
	other := contractTenant(t, ts, "enterprise_plus")
	expect(t, ts.do(&other, "GET", path, nil), 404, "NOT_FOUND")
}

func date(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
