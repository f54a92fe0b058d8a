package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/demo"
)

// The demo seed of `make run` goes through the real API (every rule a client meets), seeds
// once, and leaves a portfolio whose figures are not empty: realised value, variance, at-risk.
func TestDemoSeed(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	addr := ts.listen()
	admin := ts.admin()
	client := demo.Client{BaseURL: "http://" + addr, Tenant: ts.tenant.String(), Token: ts.token(admin), HTTP: &http.Client{Timeout: 30 * time.Second}}
	portfolio := demo.Default()

	res, err := demo.Seed(t.Context(), client, portfolio, time.Now().UTC())
	if err != nil {
		t.Fatal(err)
	}
	var benefits, actuals, stakeholders int
	for _, in := range portfolio.Initiatives {
		benefits += len(in.Benefits)
		stakeholders += len(in.Stakeholders)
		for _, b := range in.Benefits {
			actuals += b.ActualPeriods
		}
	}
	var engagements, cases int
	for _, in := range portfolio.Initiatives {
		for _, s := range in.Stakeholders {
			engagements += len(s.Engagements)
		}
		for _, bc := range in.BusinessCases {
			cases++
			if bc.NextVersion {
				cases++
			}
		}
	}
	if res.Skipped || res.Initiatives != len(portfolio.Initiatives) || res.Benefits != benefits || res.Actuals != actuals ||
		res.Stakeholders != stakeholders || res.Engagements != engagements || res.BusinessCases != cases || cases < 2 {
		t.Fatalf("seed result %+v; want %d initiatives, %d benefits, %d actuals, %d stakeholders, %d engagements",
			res, len(portfolio.Initiatives), benefits, actuals, stakeholders, engagements)
	}

	again, err := demo.Seed(t.Context(), client, portfolio, time.Now().UTC())
	if err != nil || !again.Skipped {
		t.Fatalf("second seed: %+v, %v; want skipped", again, err)
	}

	list := ts.do(&admin, "GET", "/v1/initiatives?sort=name&order=asc", nil).json(t)
	data := list["data"].([]any)
	if len(data) != len(portfolio.Initiatives) {
		t.Fatalf("listed %d initiatives, want %d", len(data), len(portfolio.Initiatives))
	}
	byName := map[string]map[string]any{}
	for _, d := range data {
		m := d.(map[string]any)
		byName[m["name"].(string)] = m
	}
	cloud := byName["Cloud migration"]
	if cloud["status"] != "active" {
		t.Errorf("Cloud migration status %v, want active", cloud["status"])
	}
	detail := ts.do(&admin, "GET", "/v1/initiatives/"+cloud["id"].(string), nil).json(t)
	metrics := detail["metrics"].(map[string]any)
	if n, _ := metrics["benefits_count"].(float64); n != 2 {
		t.Errorf("benefits_count %v, want 2", metrics["benefits_count"])
	}
	if v, _ := metrics["realized_value_to_date"].(float64); v <= 0 {
		t.Errorf("realized_value_to_date %v, want > 0", metrics["realized_value_to_date"])
	}
	if n, _ := metrics["stakeholders_at_risk"].(float64); n < 1 {
		t.Errorf("stakeholders_at_risk %v, want the seeded at-risk stakeholder", metrics["stakeholders_at_risk"])
	}

	bl := ts.do(&admin, "GET", "/v1/benefits?initiative_id="+cloud["id"].(string)+"&sort=name&order=asc", nil).json(t)
	first := bl["data"].([]any)[0].(map[string]any)
	if first["name"] != "Data-centre cost savings" {
		t.Fatalf("first benefit %v", first["name"])
	}
	acts := ts.do(&admin, "GET", "/v1/benefits/"+first["id"].(string)+"/actuals?page_size=100", nil).json(t)
	if got := len(acts["data"].([]any)); got != demo.HistoryMonths {
		t.Errorf("%d actuals of %s, want %d", got, first["name"], demo.HistoryMonths)
	}

	// Exactly the two stakeholders the portfolio sets up at risk, for their two different reasons.
	r := ts.do(&admin, "GET", "/v1/stakeholders?at_risk=true&sort=name&order=asc", nil)
	expect(t, r, 200)
	var risky struct {
		Data []struct {
			Name   string
			Reason string `json:"at_risk_reason"`
		}
	}
	if err := json.Unmarshal(r.body, &risky); err != nil {
		t.Fatal(err)
	}

	// The demo tenant's exports have content: an approved case with frozen figures, and its next version as a draft.
	bcs := ts.do(&admin, "GET", "/v1/business-cases?initiative_id="+cloud["id"].(string), nil).json(t)["data"].([]any)
	statuses := map[string]bool{}
	for _, b := range bcs {
		m := b.(map[string]any)
		statuses[fmt.Sprintf("%v v%v", m["status"], m["version"])] = true
		if m["status"] == "approved" && m["snapshot"] == nil {
			t.Errorf("the approved demo case has no frozen snapshot: %v", m)
		}
	}
	if len(bcs) != 2 || !statuses["approved v1"] || !statuses["draft v2"] {
		t.Errorf("demo business cases: %v", statuses)
	}
	if len(risky.Data) != 2 || risky.Data[0].Name != "Jonas Meyer" || risky.Data[0].Reason != "negative_sentiment" ||
		risky.Data[1].Name != "Marco Rossi" || risky.Data[1].Reason != "not_engaged" {
		t.Errorf("at risk: %s", r.body)
	}
}
