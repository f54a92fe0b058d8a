package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/worker"
)

// The largest technical deep dive the API accepts (every section's title and
// body at their maxima, an initiative with the most projects, each with the
// longest name and description) validates as approvable, is approved, and
// exports in every format; so does the draft before it.
func TestLargestAcceptedCaseExports(t *testing.T) {
	if testing.Short() {
		t.Skip("a document of hundreds of pages: not in -short")
	}
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Largest case"})
	ts.createBenefit(admin, benefitBody(initID, "Savings"))
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/costs", map[string]any{"name": "Build", "category": "capex", "amount": 1000, "currency": "EUR", "period": monthsAgo(6)}), 201)
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "EUR", "discount_rate": 0.08, "fiscal_year_start_month": 1}), 200)
	for i := range initiative.MaxProjects {
		name := fmt.Sprintf("Project %03d ", i+1) + strings.Repeat("n", 200-12)
		expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/projects", map[string]any{"name": name,
			"description": strings.Repeat("Description of the project. ", 10_000/28+1)[:10_000]}), 201)
	}
	sections := validation.Names(businesscase.Sections)
	content := map[string]any{}
	for i, s := range sections {
		body := strings.Repeat(fmt.Sprintf("Section %d says this. ", i+1), businesscase.MaxBodyLen)[:businesscase.MaxBodyLen]
		content[s] = map[string]any{"title": strings.Repeat("T", businesscase.MaxTitleLen), "body": body}
	}
	r := ts.do(&admin, "POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": "Largest case", "template": "technical_deep_dive",
		"sections": sections, "content": content})
	expect(t, r, 201)
	base := "/v1/business-cases/" + r.json(t)["id"].(string)
	if v := ts.do(&admin, "GET", base+"/validation", nil).json(t); v["can_approve"] != true {
		t.Fatalf("validation: %v", v)
	}
	runWorker(t, &worker.Worker{Config: testConfig(t), Pool: ts.pool, Temporal: testenv.TemporalClient(t), Log: testenv.QuietLogger()})
	exportAll := func(stage string) {
		for _, f := range []string{"pdf", "docx", "pptx"} {
			r := ts.do(&admin, "POST", base+"/export", map[string]any{"format": f, "include_appendices": true})
			expect(t, r, 202)
			status := r.json(t)["status_url"].(string)
			var got map[string]any
			testenv.Eventually(t, 3*time.Minute, stage+" "+f+" export to finish", func() bool {
				got = ts.do(&admin, "GET", status, nil).json(t)
				return got["status"] == "succeeded" || got["status"] == "failed"
			})
			if got["status"] != "succeeded" {
				t.Errorf("%s %s export: %v", stage, f, got)
			}
		}
	}
	exportAll("draft")
	expect(t, ts.do(&admin, "POST", base+"/submit", nil), 200)
	expect(t, ts.do(&admin, "POST", base+"/approve", map[string]any{"approval_level": "board"}), 200)
	exportAll("approved")
}
