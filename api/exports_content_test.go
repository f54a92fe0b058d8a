package api_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"

	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/render"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/worker"
	"github.com/valuecase/valuecase/workflows"
)

// requireDocTools skips without LibreOffice and poppler, unless CI is set
// (CI installs them, so there a missing tool fails).
func requireDocTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"soffice", "pdftotext", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found; CI installs it (.ci/run)", tool)
			}
			t.Skipf("%s not found", tool)
		}
	}
}

// documentText is the text a reader sees: a PDF as is, a DOCX or PPTX
// printed to PDF by LibreOffice first (it exits 0 on broken input, so the
// text is what counts).
func documentText(t *testing.T, format string, body []byte) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "case."+format)
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return string(out)
	}
	pdf := file
	if format != "pdf" {
		run("soffice", "-env:UserInstallation=file://"+filepath.ToSlash(t.TempDir()), "--headless", "--norestore",
			"--convert-to", "pdf", "--outdir", dir, file)
		pdf = filepath.Join(dir, "case.pdf")
	}
	if info := run("pdfinfo", pdf); !strings.Contains(info, "Pages:") {
		t.Fatalf("pdfinfo of the %s: %s", format, info)
	}
	return run("pdftotext", "-layout", pdf, "-")
}

// TestBusinessCaseExportContent: an approved version's documents show what
// the API reports for it, frozen at approval. The initiative has one
// monthly benefit of CHF 120,000 a year (10,000 a month) over 24 months
// from 12 months ago with 9,500 measured in each of the last 12 months, a
// one-off build cost and a monthly run cost, a stakeholder and a project.
// After approval a large cost is added: the documents must not move. The
// expected numbers come from the case's snapshot (GET, the API's figures)
// and, independently, from the inputs:
//
//	total benefits 24 × 10,000 = 240,000; total costs 60,000 + 24 × 2,000 = 108,000
//	cumulative after the last month = 240,000 − 108,000 = 132,000
//	best case  ROI = (1.2 × 240,000 − 0.9 × 108,000) ÷ (0.9 × 108,000) = 196.3 %
//	worst case ROI = (0.8 × 240,000 − 1.1 × 108,000) ÷ (1.1 × 108,000) = 61.6 %
//	a quarter of plan = 3 × 10,000 = 30,000; a measured quarter = 3 × 9,500 = 28,500
func TestBusinessCaseExportContent(t *testing.T) {
	requireDocTools(t)
	ts := newTestServer(t, "enterprise", allowPrivate)
	admin := ts.admin()
	rc := newHookReceiver(t, 200)
	ts.createWebhook(admin, rc.URL+"/hooks", "business_case.approved", "business_case.rejected")
	expect(t, ts.do(&admin, "PUT", "/v1/settings", map[string]any{"base_currency": "CHF", "discount_rate": 0.08, "fiscal_year_start_month": 1}), 200)
	initID := ts.createInitiative(admin, map[string]any{"name": "Shared services Łódź"})
	ben := ts.createBenefit(admin, map[string]any{"initiative_id": initID, "name": "Invoice automation Zürich", "category": "cost_savings",
		"expected_value": 120000, "currency": "CHF", "unit": "currency", "measurement_frequency": "monthly",
		"expected_start_date": monthsAgo(12) + "-01", "expected_end_date": monthsAgo(-11) + "-01"})
	for m := 12; m >= 1; m-- {
		expect(t, ts.do(&admin, "POST", "/v1/benefits/"+ben+"/actuals", map[string]any{"period": monthsAgo(m), "value": 9500}), 201)
	}
	costs := "/v1/initiatives/" + initID + "/costs"
	expect(t, ts.do(&admin, "POST", costs, map[string]any{"name": "Platform build", "category": "capex", "amount": 60000, "currency": "CHF", "period": monthsAgo(12)}), 201)
	expect(t, ts.do(&admin, "POST", costs, map[string]any{"name": "Run costs", "category": "opex", "amount": 2000, "currency": "CHF",
		"period": monthsAgo(12), "recurrence": "monthly", "end_period": monthsAgo(-11)}), 201)
	expect(t, ts.do(&admin, "POST", "/v1/stakeholders", map[string]any{"initiative_id": initID, "name": "Jürg Meier", "email": "jurg@example.com",
		"role": "CFO", "influence": "critical", "interest": "high"}), 201)
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/projects", map[string]any{"name": "Łódź cut-over", "description": "Move AP to the hub."}), 201)

	body := businessCaseBody(initID, "Zürich finance hub")
	body["template"] = "cfo_view"
	body["content"].(map[string]any)["risk_assessment"] = filledContent["risk_assessment"]
	body["content"].(map[string]any)["implementation_roadmap"] = filledContent["implementation_roadmap"]
	r := ts.do(&admin, "POST", "/v1/business-cases", body)
	expect(t, r, 201)
	base := "/v1/business-cases/" + r.json(t)["id"].(string)
	expect(t, ts.do(&admin, "POST", base+"/approve", map[string]any{"approval_level": "board", "notes": "Approved for Łódź."}), 200)
	snap := ts.do(&admin, "GET", base, nil).json(t)["snapshot"].(map[string]any)
	if snap["total_benefits"] != 240000.0 || snap["total_costs"] != 108000.0 {
		t.Fatalf("snapshot totals: %v", snap)
	}
	// After approval the initiative moves on; the approved documents must not.
	expect(t, ts.do(&admin, "POST", costs, map[string]any{"name": "Late addition", "category": "capex", "amount": 500000, "currency": "CHF", "period": monthsAgo(1)}), 201)

	startExportWorker(t, ts)

	npv := render.FormatAmount(snap["npv"].(float64), "CHF")
	roi := render.FormatPercent(snap["roi_percent"].(float64))
	want := []string{
		"Zürich finance hub", "Shared services Łódź", "Jürg Meier", "Approved for Łódź.",
		"Zürich – board only", // the watermark
		npv, roi,              // the key figures, as the API reports them
		"196.3%", "61.6%", // best and worst case (computed above)
		"132,000.00",                  // the cumulative cash flow of the last month
		"Platform build", "60,000.00", // a cost line
		"sha256:", "NPV =", "Data as of", // the appendix
	}
	for _, f := range []string{"pdf", "docx", "pptx"} {
		r := ts.do(&admin, "POST", base+"/export", map[string]any{"format": f, "include_appendices": true, "watermark": "Zürich – board only"})
		expect(t, r, 202)
		u := r.json(t)["status_url"].(string)
		testenv.Eventually(t, 60*time.Second, f+" export to succeed", func() bool {
			got := ts.do(&admin, "GET", u, nil).json(t)
			if got["status"] == "failed" {
				t.Fatalf("%s export failed: %v", f, got["error"])
			}
			return got["status"] == "succeeded"
		})
		d := ts.do(&admin, "GET", u+"/download", nil)
		expect(t, d, 200)
		text := documentText(t, f, d.body)
		flat := strings.Join(strings.Fields(text), " ")
		for _, s := range want {
			if f == "pptx" && (s == "132,000.00" || s == "Platform build" || s == "60,000.00") {
				continue // slides carry the chart, not the monthly and cost tables
			}
			if !strings.Contains(flat, s) {
				t.Errorf("the %s lacks %q", f, s)
			}
		}
		if strings.Contains(flat, "Late addition") || strings.Contains(flat, "500,000") {
			t.Errorf("the %s shows a cost added after approval", f)
		}
		if f == "pdf" {
			// The monthly cash-flow table: each month of plan is 10,000 in, 2,000 out.
			last, _ := time.Parse("2006-01", monthsAgo(-11))
			month := fmt.Sprintf("%s 10,000.00 2,000.00 8,000.00", render.FormatMonth(last))
			if !strings.Contains(flat, month) {
				t.Errorf("the PDF's cash-flow table lacks the row %q:\n%.2000s", month, text)
			}
		}
	}
	// The worker's outbox relay delivered the approval, signed, to the receiver; the
	// exports themselves emit no webhook event (the client follows the status URL).
	testenv.Eventually(t, 20*time.Second, "the approval's delivery", func() bool { return len(rc.OfType("business_case.approved")) == 1 })
	if n, bad := len(rc.Requests()), rc.SignatureErrors(); n != 1 || bad != 0 {
		t.Errorf("%d deliveries (%d with a bad signature), want only business_case.approved", n, bad)
	}
}

// startExportWorker runs the real worker (worker.Run) against the test's database
// and dev server until stop is called; stop waits for it to return.
func startExportWorker(t *testing.T, ts *testServer) (stop func()) {
	t.Helper()
	cfg := testConfig(t)
	cfg.OutboundAllowPrivateNetworks = true // the webhook receivers listen on 127.0.0.1
	return runWorker(t, &worker.Worker{Config: cfg, Pool: ts.pool, Temporal: testenv.TemporalClient(t), Log: testenv.QuietLogger()})
}

// TestBusinessCaseExportSurvivesAWorkerCrash: the worker goes away while
// the render activity of a large case is running (progress recorded, status
// running); a new worker picks the export up (the render's attempt is
// retried) and the export succeeds with one file that downloads, within the
// spec's 60 s. Twice: a `valuecase worker` process killed with SIGKILL (the
// attempt is retried once its heartbeat times out, 10 s), and worker.Run
// stopped (the attempt fails on its cancelled context and is retried at once).
func TestBusinessCaseExportSurvivesAWorkerCrash(t *testing.T) {
	t.Run("process killed", func(t *testing.T) {
		exportThroughCrash(t, func(t *testing.T, ts *testServer) func() { return startWorkerProcess(t, ts) })
	})
	t.Run("worker stopped", func(t *testing.T) {
		exportThroughCrash(t, startExportWorker)
	})
}

// exportThroughCrash exports a large case, takes the worker that start
// started away mid-render, and checks a new in-process worker completes it.
func exportThroughCrash(t *testing.T, start func(t *testing.T, ts *testServer) (crash func())) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Large case"})
	if err := benchutil.SeedLargeValueModel(context.Background(), ts.pool, ts.tenant, uuid.MustParse(initID), admin.sub, time.Now()); err != nil {
		t.Fatal(err)
	}
	ids, content := benchutil.LargeCaseSections()
	r := ts.do(&admin, "POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": "Large case", "template": "cfo_view",
		"sections": ids, "content": content})
	expect(t, r, 201)
	caseID := r.json(t)["id"].(string)
	base := "/v1/business-cases/" + caseID
	tc := testenv.TemporalClient(t)

	// The render must be caught mid-way: if a try finishes before the worker
	// stops, try again (at most three exports).
	for try := 1; ; try++ {
		crash := start(t, ts)
		r := ts.do(&admin, "POST", base+"/export", map[string]any{"format": "pdf", "include_appendices": true, "watermark": "CRASH TEST"})
		expect(t, r, 202)
		exp := r.json(t)
		u := exp["status_url"].(string)
		var seen map[string]any
		posted := time.Now()
		testenv.Eventually(t, 60*time.Second, "the render to start", func() bool {
			seen = ts.do(&admin, "GET", u, nil).json(t)
			return seen["status"] == "succeeded" || (seen["status"] == "running" && seen["progress"].(float64) > 0)
		})
		crash() // the worker goes away mid-render
		if seen["status"] == "succeeded" {
			if try == 3 {
				t.Fatal("three renders finished before the worker could be stopped")
			}
			continue
		}
		if got := ts.do(&admin, "GET", u, nil).json(t); got["status"] != "running" {
			t.Fatalf("after the crash the export is %v, want still running", got)
		}
		started := time.Now()
		startExportWorker(t, ts)
		var got map[string]any
		testenv.Eventually(t, 60*time.Second, "the export to complete on the new worker", func() bool {
			got = ts.do(&admin, "GET", u, nil).json(t)
			if got["status"] == "failed" {
				t.Fatalf("export failed after the restart: %v", got["error"])
			}
			return got["status"] == "succeeded"
		})
		t.Logf("try %d: crashed at %v%% progress; succeeded %v after the new worker started, %v after the POST",
			try, seen["progress"], time.Since(started).Round(time.Millisecond), time.Since(posted).Round(time.Millisecond))
		if time.Since(posted) > 60*time.Second {
			t.Errorf("the export took %v, over the spec's 60 s", time.Since(posted))
		}
		d := ts.do(&admin, "GET", u+"/download", nil)
		expect(t, d, 200)
		if !bytes.HasPrefix(d.body, []byte("%PDF-")) || float64(len(d.body)) != got["size"].(float64) || d.header.Get("ETag") != `"`+got["sha256"].(string)+`"` {
			t.Errorf("download: %d bytes, ETag %s, resource %v", len(d.body), d.header.Get("ETag"), got)
		}
		// One export, one file: the list has exactly the exports requested.
		list := ts.do(&admin, "GET", base+"/exports", nil).json(t)
		if n := list["meta"].(map[string]any)["pagination"].(map[string]any)["total"]; n != float64(try) {
			t.Errorf("%v exports listed, want %d", n, try)
		}
		// The render ran twice: the crashed attempt and the retry.
		wfID := workflows.BusinessCaseExportWorkflowID(ts.tenant.String(), caseID, exp["id"].(string))
		it := tc.GetWorkflowHistory(context.Background(), wfID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		attempts := int32(0)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
				attempts = max(attempts, a.GetAttempt())
			}
		}
		if attempts < 2 {
			t.Errorf("the render's last attempt is %d, want a retry after the crash", attempts)
		}
		return
	}
}
