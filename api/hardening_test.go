package api_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
)

// A NUL in any text a business case carries (PostgreSQL text cannot hold it)
// is a 422 on the field, on create, PUT and PATCH alike, never a 500.
func TestNULInBusinessCaseText(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "NUL target"})
	r := ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(initID, "Clean case"))
	expect(t, r, 201)
	path := "/v1/business-cases/" + r.json(t)["id"].(string)
	withNUL := func(title, text string) map[string]any {
		b := businessCaseBody(initID, "Case")
		b["content"] = map[string]any{"executive_summary": map[string]any{"title": title, "body": text}}
		return b
	}
	for _, tc := range []struct {
		method, path string
		body         any
		field        string
	}{
		{"POST", "/v1/business-cases", withNUL("Why\u0000now", "fine"), "content.executive_summary.title"},
		{"POST", "/v1/business-cases", withNUL("Why now", "nul\u0000body"), "content.executive_summary.body"},
		{"PUT", path, withNUL("Why\u0000now", "fine"), "content.executive_summary.title"},
		{"PATCH", path, map[string]any{"content": map[string]any{"financial_analysis": map[string]any{"body": "\u0000"}}}, "content.financial_analysis.body"},
		{"PATCH", path, map[string]any{"name": "a\u0000b"}, "name"},
	} {
		r := ts.do(&admin, tc.method, tc.path, tc.body)
		expect(t, r, 422, "VALIDATION_ERROR")
		if field, code := fieldErrorCode(t, r); field != tc.field || code != "invalid_value" {
			t.Errorf("%s %s: errors[0] = %s/%s, want %s/invalid_value", tc.method, tc.path, field, code, tc.field)
		}
	}
}

// PATCH of an integration refuses a blank name as PUT does (422 on name), never a 500.
func TestPatchIntegrationBlankName(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus", allowPrivate)
	admin := ts.admin()
	feed := providertest.NewFeed(t, providertest.Options{Records: 1})
	r := ts.do(&admin, "POST", "/v1/integrations", map[string]any{"provider": "http_feed", "name": "Feed",
		"config": map[string]any{"instance_url": feed.URL, "oauth_token": "patch-name-token-0123456789"}})
	expect(t, r, 201)
	path := "/v1/integrations/" + r.json(t)["id"].(string)
	for _, name := range []any{"", "   ", nil} {
		for _, method := range []string{"PATCH", "PUT"} {
			body := map[string]any{"name": name}
			if method == "PUT" {
				body["provider"], body["config"] = "http_feed", map[string]any{"instance_url": feed.URL}
			}
			r := ts.do(&admin, method, path, body)
			expect(t, r, 422, "VALIDATION_ERROR")
			if field, code := fieldErrorCode(t, r); field != "name" || code != "required" {
				t.Errorf("%s name %q: errors[0] = %s/%s", method, name, field, code)
			}
		}
	}
	if got := ts.do(&admin, "GET", path, nil).json(t)["name"]; got != "Feed" {
		t.Fatalf("name after refused writes: %v", got)
	}
}

// Error messages name the field, never quote what was sent: for each input
// that was quoted before, no 8-byte run of the input comes back in a message.
func TestMessagesDoNotQuoteInput(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus", allowPrivate)
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Echo target"})
	feed := providertest.NewFeed(t, providertest.Options{Records: 1})
	const marker = "<script>alert(document.cookie)</script>"
	caseBody := businessCaseBody(initID, "Echo case")
	caseBody["sections"] = []string{"executive_summary", marker}
	for _, tc := range []struct {
		name, method, path string
		body               any
		headers            []string
	}{
		{"currency", "POST", "/v1/benefits", map[string]any{"initiative_id": initID, "name": "Savings", "category": "cost_savings", "unit": "currency",
			"measurement_frequency": "monthly", "expected_value": 1000, "expected_start_date": "2027-01-01", "currency": marker}, nil},
		{"cost currency", "POST", "/v1/initiatives/" + initID + "/costs", map[string]any{"name": "c", "category": "opex", "amount": 1, "currency": "EUROPE1", "period": "2027-01", "recurrence": "once"}, nil},
		{"sections[i]", "POST", "/v1/business-cases", caseBody, nil},
		{"webhook events[i]", "POST", "/v1/webhooks", map[string]any{"url": feed.URL, "events": []string{marker}, "secret": hookSecret}, nil},
		{"sync_schedule.timezone", "POST", "/v1/integrations", map[string]any{"provider": "http_feed", "name": "Feed",
			"config": map[string]any{"instance_url": feed.URL}, "sync_schedule": map[string]any{"frequency": "daily", "at": "02:00", "timezone": "Mars/<b>Olympus"}}, nil},
		{"widgets[i].params", "POST", "/v1/dashboards", map[string]any{"name": "Mine", "widgets": []any{
			map[string]any{"type": "roi", "title": "ROI", "params": map[string]any{"period": marker}},
			map[string]any{"type": "trends", "title": "T", "params": map[string]any{"from": marker}}}}, nil},
		{"long period", "GET", "/v1/analytics/roi?period=" + strings.Repeat("2024Q9", 1300), nil, nil},
		{"X-Tenant-ID", "GET", "/v1/initiatives", nil, []string{"X-Tenant-ID", marker}},
		{"X-Tenant-ID (uuid of no tenant)", "GET", "/v1/benefits", nil, []string{"X-Tenant-ID", "0f0e0d0c-0b0a-4909-8807-060504030201"}},
	} {
		r := ts.do(&admin, tc.method, tc.path, tc.body, tc.headers...)
		if r.status < 400 || r.status >= 500 {
			t.Errorf("%s: %d %s", tc.name, r.status, r.body)
			continue
		}
		input, _ := json.Marshal(tc.body)
		input = append(append(input, tc.path...), strings.Join(tc.headers, " ")...)
		input = append(input, marker...) // the raw marker too: JSON escapes its < and >
		var e struct {
			Error struct {
				Message string
				Errors  []struct{ Field, Message string }
			}
		}
		if err := json.Unmarshal(r.body, &e); err != nil {
			t.Fatalf("%s: %s", tc.name, r.body)
		}
		msgs, fields := []string{e.Error.Message}, []string{}
		for _, fe := range e.Error.Errors {
			msgs, fields = append(msgs, fe.Message), append(fields, fe.Field)
		}
		for _, m := range msgs {
			if leak := echoed(input, m, fields); leak != "" {
				t.Errorf("%s: %q of the input echoed in %q", tc.name, leak, m)
			}
		}
		if len(r.body) > 2048 {
			t.Errorf("%s: a %d-byte error body", tc.name, len(r.body))
		}
	}
}

// A token shorter than 16 characters answers the hint "****": its last 4
// characters would give too much of it away. A long one keeps its last 4.
func TestShortSecretHint(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus", allowPrivate)
	admin := ts.admin()
	feed := providertest.NewFeed(t, providertest.Options{Records: 1})
	r := ts.do(&admin, "POST", "/v1/integrations", map[string]any{"provider": "http_feed", "name": "Short",
		"config": map[string]any{"instance_url": feed.URL, "oauth_token": "abcd"}})
	expect(t, r, 201)
	if got := r.json(t)["oauth_token_hint"]; got != "****" {
		t.Fatalf("hint of a 4-character token: %v", got)
	}
	path := "/v1/integrations/" + r.json(t)["id"].(string)
	r = ts.do(&admin, "PATCH", path, map[string]any{"config": map[string]any{"oauth_token": "fifteen-chars-x"}})
	expect(t, r, 200)
	if got := r.json(t)["oauth_token_hint"]; got != "****" {
		t.Fatalf("hint of a 15-character token: %v", got)
	}
	r = ts.do(&admin, "PATCH", path, map[string]any{"config": map[string]any{"oauth_token": "sixteen-chars-xy"}})
	if got := r.json(t)["oauth_token_hint"]; got != "****s-xy" {
		t.Fatalf("hint of a 16-character token: %v", got)
	}
}

// A bulk body that holds no records is a 400 in every format, as documented;
// downloads (bulk export) carry nosniff.
func TestBulkBodyWithoutRecords(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	for name, tc := range map[string]struct{ query, body, contentType string }{
		"empty NDJSON":           {"?resource=actuals", "", "application/x-ndjson"},
		"blank-line NDJSON":      {"?resource=actuals", " \n\r\n\t\n", "application/x-ndjson"},
		"header-only CSV":        {"?resource=actuals", "benefit_id,period,value\n", "text/csv"},
		"header-only CSV no EOL": {"?resource=benefits", "\ufeffinitiative_id,name", "text/csv"},
		"empty records array":    {"", `{"resource":"actuals","records":[]}`, "application/json"},
	} {
		r := ts.do(&admin, "POST", "/v1/bulk/import"+tc.query, tc.body, "Content-Type", tc.contentType)
		if r.status != 400 || r.errorCode(t) != "INVALID_PARAMETER" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	for _, format := range []string{"csv", "ndjson"} {
		r := ts.do(&admin, "GET", "/v1/bulk/export?resource=initiatives&format="+format, nil)
		expect(t, r, 200)
		if r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s export without nosniff: %v", format, r.header)
		}
	}
}

// Text that a spreadsheet would evaluate goes out of every CSV export inert
// (a leading apostrophe), and the export imports back unchanged.
func TestCSVExportNeutralisesFormulas(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": `=HYPERLINK("http://evil.invalid","x")`, "description": "\t=1+1 and @SUM(A1)"})
	expect(t, ts.do(&admin, "POST", "/v1/stakeholders", map[string]any{"initiative_id": initID, "name": "+cmd|' /C calc'!A0",
		"email": "ada@example.com", "influence": "high", "interest": "high", "notes": "-2+3"}), 201)
	expect(t, ts.do(&admin, "POST", "/v1/initiatives/"+initID+"/costs", map[string]any{"name": "@SUM(A1:A9)", "category": "opex",
		"amount": 10, "currency": "USD", "period": "2027-01", "recurrence": "once"}), 201)
	benID := ts.createBenefit(admin, map[string]any{"initiative_id": initID, "name": "-Savings", "category": "cost_savings", "unit": "currency",
		"measurement_frequency": "monthly", "expected_value": -5, "expected_start_date": "2025-01-01", "currency": "USD", "description": "\r=1"})
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+benID+"/actuals", map[string]any{"value": -3, "period": "2025-02", "notes": "=1/0"}), 201)

	for _, resource := range []string{"initiatives", "stakeholders", "costs", "benefits", "actuals"} {
		ex := ts.do(&admin, "GET", "/v1/bulk/export?resource="+resource+"&format=csv", nil)
		expect(t, ex, 200)
		rows, err := csv.NewReader(bytes.NewReader(ex.body)).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("%s export: %v %q", resource, err, ex.body)
		}
		quoted := 0
		for i, cell := range rows[1] {
			if cell == "" {
				continue
			}
			if _, err := strconv.ParseFloat(cell, 64); err != nil && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("%s.%s: %q would be evaluated by a spreadsheet", resource, rows[0][i], cell)
			}
			if cell[0] == '\'' {
				quoted++
			}
		}
		if quoted == 0 {
			t.Errorf("%s: no neutralised cell in %q", resource, rows[1])
		}
		back := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import?resource="+resource+"&mode=upsert", ex.body, "Content-Type", "text/csv"))
		if back.Summary.Unchanged != 1 || back.Summary.Total != 1 {
			t.Errorf("%s round trip: %+v %+v", resource, back.Summary, back.Results)
		}
	}
}

// A bulk import stores every field the single route accepts (a benefit's
// external_key), the export carries it and imports back unchanged, and a
// field the single route refuses is a row error.
func TestBulkBenefitsExternalKey(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Keyed benefits"})
	held := benefitBody(initID, "Held")
	held["external_key"] = "ERP-HELD"
	ts.createBenefit(admin, held)
	row := func(name string, extra ...any) map[string]any {
		r := benefitBody(initID, name)
		for i := 0; i+1 < len(extra); i += 2 {
			r[extra[i].(string)] = extra[i+1]
		}
		return r
	}
	got := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "benefits", "records": []any{
		row("Savings", "external_key", " ERP-1 "),
		row("Revenue", "external_key", "ERP-1"),
		row("Taken", "external_key", "ERP-HELD"),
		row("Colour", "colour", "red"),
	}}))
	if got.statuses() != "created error:external_key/duplicate error:external_key/already_exists error:colour/unknown_field" {
		t.Fatalf("import: %s %+v", got.statuses(), got.Results)
	}
	b := ts.do(&admin, "GET", "/v1/benefits/"+*got.Results[0].ID, nil)
	if b.json(t)["external_key"] != "ERP-1" {
		t.Fatalf("external_key not stored: %s", b.body)
	}
	ex := ts.do(&admin, "GET", "/v1/bulk/export?resource=benefits&format=csv", nil)
	rows, err := csv.NewReader(bytes.NewReader(ex.body)).ReadAll()
	if err != nil || len(rows) != 3 || rows[0][len(rows[0])-1] != "external_key" {
		t.Fatalf("export: %v %q", err, ex.body)
	}
	keys := []string{rows[1][len(rows[1])-1], rows[2][len(rows[2])-1]}
	slices.Sort(keys)
	if keys[0] != "ERP-1" || keys[1] != "ERP-HELD" {
		t.Fatalf("exported keys %v", keys)
	}
	for _, format := range []string{"csv", "ndjson"} {
		ex := ts.do(&admin, "GET", "/v1/bulk/export?resource=benefits&format="+format, nil)
		ct := map[string]string{"ndjson": "application/x-ndjson", "csv": "text/csv"}[format]
		back := decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import?resource=benefits&mode=upsert", ex.body, "Content-Type", ct))
		if back.Summary.Unchanged != 2 {
			t.Errorf("%s round trip: %s", format, back.statuses())
		}
	}
	// An upsert replaces as PUT does: a new key is stored, another benefit's key is refused.
	got = decodeImport(t, ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "benefits", "mode": "upsert", "records": []any{
		row("Savings", "external_key", "ERP-2"), row("Held", "external_key", "ERP-2")}}))
	if got.statuses() != "updated error:external_key/duplicate" {
		t.Fatalf("upsert: %s %+v", got.statuses(), got.Results)
	}
	if k := ts.do(&admin, "GET", "/v1/benefits/"+*got.Results[0].ID, nil).json(t)["external_key"]; k != "ERP-2" {
		t.Fatalf("external_key after upsert: %v", k)
	}
}
