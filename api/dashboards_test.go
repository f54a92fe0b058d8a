package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// TestContractDashboards drives /v1/dashboards through its success and error
// paths and validates every response against api/openapi.yaml: who sees and
// writes which dashboard, widget validation, the evaluation of every widget in
// one call (the same figures as the analytics endpoints, on the golden
// portfolio of TestContractAnalytics), and the portfolio dashboard.
func TestContractDashboards(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	cc := newContractClient(t, ts)
	admin := ts.admin()
	analyst := caller{sub: "analyst-1", tenant: ts.tenant, permissions: []string{"analytics:read"}}
	analyst2 := caller{sub: "analyst-2", tenant: ts.tenant, permissions: []string{"analytics:read", "stakeholders:read"}}
	configurer := caller{sub: "config-1", tenant: ts.tenant, permissions: []string{"analytics:read", "admin:config"}}
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"initiatives:read", "benefits:read"}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	p, archived := analyticsPortfolio(t, ts, admin)

	// 201: a personal dashboard of any analytics:read holder; trimmed, visibility personal by default.
	r := call(contractCall{as: &analyst, method: "POST", path: "/v1/dashboards", want: 201, body: map[string]any{
		"name": " Mine ", "widgets": []any{
			map[string]any{"type": "roi", "title": "ROI of P", "params": map[string]any{"initiative_id": p, "period": "2024", "basis": "plan"}},
			map[string]any{"type": "realization", "title": "Realisation"},
			map[string]any{"type": "trends", "title": "Trends", "params": map[string]any{"from": "2024-01", "to": "2024-12", "group_by": "category"}},
			map[string]any{"type": "roi", "title": "Gone", "params": map[string]any{"initiative_id": uuid.NewString()}},
			map[string]any{"type": "forecasts", "title": "Forecast", "params": map[string]any{"group_by": "category", "horizon": "3"}},
			map[string]any{"type": "benchmarks", "title": "Peers", "params": map[string]any{"metric": "roi_percent"}},
		}}})
	mine := r.json(t)
	minePath := "/v1/dashboards/" + mine["id"].(string)
	if mine["name"] != "Mine" || mine["visibility"] != "personal" || mine["owner_id"] != "analyst-1" || mine["description"] != "" ||
		len(mine["widgets"].([]any)) != 6 || r.header.Get("Location") != minePath {
		t.Errorf("created: %s", r.body)
	}
	if w := mine["widgets"].([]any)[1].(map[string]any); fmt.Sprint(w["params"]) != "map[]" {
		t.Errorf("params of a widget sent without: %v", w)
	}
	// 403: a shared one needs admin:config; 201 with it.
	shared := map[string]any{"name": "Board", "visibility": "shared", "description": "monthly", "widgets": []any{}}
	call(contractCall{as: &analyst, method: "POST", path: "/v1/dashboards", body: shared, want: 403, code: "AUTHORIZATION_ERROR"})
	r = call(contractCall{as: &configurer, method: "POST", path: "/v1/dashboards", body: shared, want: 201})
	board := r.json(t)
	boardPath := "/v1/dashboards/" + board["id"].(string)

	// Visibility: another user sees the shared one but not analyst-1's personal one (404, not 403).
	call(contractCall{as: &analyst2, method: "GET", path: minePath, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &analyst2, method: "GET", path: minePath + "/data", want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &analyst2, method: "PUT", path: minePath, body: map[string]any{"name": "x", "widgets": []any{}}, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &analyst2, method: "DELETE", path: minePath, want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &analyst2, method: "GET", path: boardPath, want: 200})
	list := func(as caller, query string) []string {
		t.Helper()
		r := call(contractCall{as: &as, method: "GET", path: "/v1/dashboards" + query, want: 200})
		var names []string
		for _, d := range r.json(t)["data"].([]any) {
			names = append(names, d.(map[string]any)["name"].(string))
		}
		return names
	}
	if got := fmt.Sprint(list(analyst, "")); got != "[Board Mine]" {
		t.Errorf("analyst-1's list: %s", got)
	}
	if got := fmt.Sprint(list(analyst2, "")); got != "[Board]" {
		t.Errorf("analyst-2's list: %s", got)
	}
	if got := fmt.Sprint(list(analyst, "?visibility=personal&page_size=1")); got != "[Mine]" {
		t.Errorf("personal filter: %s", got)
	}
	// 403: a shared dashboard is read-only without admin:config; the owner cannot share without it.
	call(contractCall{as: &analyst, method: "PUT", path: boardPath, body: shared, want: 403, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: &analyst, method: "DELETE", path: boardPath, want: 403, code: "AUTHORIZATION_ERROR"})
	call(contractCall{as: &analyst, method: "PUT", path: minePath, body: map[string]any{"name": "Mine", "visibility": "shared", "widgets": []any{}}, want: 403, code: "AUTHORIZATION_ERROR"})

	// 200 data: each widget's status and the body its endpoint answers (the golden figures).
	r = call(contractCall{as: &analyst, method: "GET", path: minePath + "/data", want: 200})
	widgets := r.json(t)["data"].(map[string]any)["widgets"].([]any)
	direct := func(path string) string {
		t.Helper()
		return string(call(contractCall{as: &analyst, method: "GET", path: path, want: 200}).body)
	}
	body := func(i int) map[string]any { return widgets[i].(map[string]any)["body"].(map[string]any) }
	roi := body(0)["data"].(map[string]any)
	// The plan basis asked for (TestContractAnalytics: P on the plan basis).
	if roi["roi_percent"] != 86.11 || roi["npv"] != 14396.43 || roi["mirr"] != 2.296009 || roi["basis"] != "plan" || roi["period"] != "2024" || widgets[0].(map[string]any)["status"] != 200.0 {
		t.Errorf("roi widget: %v", widgets[0])
	}
	if fmt.Sprint(body(1)) != fmt.Sprint(jsonOf(t, direct("/v1/analytics/realization"))) {
		t.Errorf("realization widget differs from GET /v1/analytics/realization:\n%v\n%s", body(1), direct("/v1/analytics/realization"))
	}
	if fmt.Sprint(body(2)) != fmt.Sprint(jsonOf(t, direct("/v1/analytics/trends?from=2024-01&to=2024-12&group_by=category"))) {
		t.Errorf("trends widget differs from GET /v1/analytics/trends")
	}
	// forecasts and benchmarks widgets: the same body as their endpoints.
	if fmt.Sprint(body(4)) != fmt.Sprint(jsonOf(t, direct("/v1/analytics/forecasts?group_by=category&horizon=3"))) {
		t.Errorf("forecasts widget differs from GET /v1/analytics/forecasts:\n%v\n%s", body(4), direct("/v1/analytics/forecasts?group_by=category&horizon=3"))
	}
	if f := body(4)["data"].(map[string]any); f["horizon"] != 3.0 || f["group_by"] != "category" || len(f["forecast"].(map[string]any)["points"].([]any)) != 3 {
		t.Errorf("forecasts widget: %v", f)
	}
	if fmt.Sprint(body(5)) != fmt.Sprint(jsonOf(t, direct("/v1/analytics/benchmarks?metric=roi_percent"))) {
		t.Errorf("benchmarks widget differs from GET /v1/analytics/benchmarks:\n%v\n%s", body(5), direct("/v1/analytics/benchmarks?metric=roi_percent"))
	}
	if b := body(5)["data"].(map[string]any); b["metric"] != "roi_percent" || widgets[5].(map[string]any)["status"] != 200.0 {
		t.Errorf("benchmarks widget: %v", widgets[5])
	}
	if w := widgets[3].(map[string]any); w["status"] != 404.0 || body(3)["error"].(map[string]any)["code"] != "NOT_FOUND" {
		t.Errorf("a widget of a missing initiative: %v", w)
	}

	// 200 PUT: replaced; the owner keeps it.
	r = call(contractCall{as: &analyst, method: "PUT", path: minePath, want: 200, body: map[string]any{"name": "Mine v2", "description": "d",
		"widgets": []any{map[string]any{"type": "realization", "title": "R", "params": map[string]any{"initiative_id": archived}}}, "id": "ignored"}})
	if d := r.json(t); d["name"] != "Mine v2" || d["description"] != "d" || len(d["widgets"].([]any)) != 1 || d["owner_id"] != "analyst-1" {
		t.Errorf("replaced: %s", r.body)
	}
	// An admin:config holder edits the shared one (owner kept), then makes it personal: now theirs.
	r = call(contractCall{as: &admin, method: "PUT", path: boardPath, body: map[string]any{"name": "Board 2", "visibility": "shared", "widgets": []any{}}, want: 200})
	if d := r.json(t); d["owner_id"] != "config-1" {
		t.Errorf("shared edit: %s", r.body)
	}
	r = call(contractCall{as: &admin, method: "PUT", path: boardPath, body: map[string]any{"name": "Board 2", "visibility": "personal", "widgets": []any{}}, want: 200})
	if d := r.json(t); d["owner_id"] != "admin-1" || d["visibility"] != "personal" {
		t.Errorf("made personal: %s", r.body)
	}
	call(contractCall{as: &configurer, method: "GET", path: boardPath, want: 404, code: "NOT_FOUND"})

	// 422: widget validation (each against the endpoint's own parameter rules), fields, limits.
	widget := func(w map[string]any) map[string]any { return map[string]any{"name": "x", "widgets": []any{w}} }
	many := make([]any, 21)
	for i := range many {
		many[i] = map[string]any{"type": "realization", "title": "r"}
	}
	for _, c := range []struct {
		body       any
		field      string
		docRejects bool
	}{
		{widget(map[string]any{"type": "pie", "title": "f"}), "widgets[0].type", true},
		{widget(map[string]any{"type": "benchmarks", "title": "b"}), "widgets[0].params", false},
		{widget(map[string]any{"type": "benchmarks", "title": "b", "params": map[string]any{"metric": "roi_percent", "industry": "retail\tbanking"}}), "widgets[0].params", false},
		{widget(map[string]any{"type": "forecasts", "title": "f", "params": map[string]any{"horizon": "25"}}), "widgets[0].params", false},
		{widget(map[string]any{"type": "forecasts", "title": "f", "params": map[string]any{"group_by": "colour"}}), "widgets[0].params", false},
		{widget(map[string]any{"type": "roi", "title": "p", "params": map[string]any{"period": "2024-Q5"}}), "widgets[0].params", false},
		{widget(map[string]any{"type": "roi", "title": "p", "params": map[string]any{"colour": "red"}}), "widgets[0].params", false},
		{widget(map[string]any{"type": "roi", "title": "p", "params": map[string]any{"basis": "actual"}}), "widgets[0].params", false},
		{widget(map[string]any{"type": "roi", "title": "p", "params": map[string]any{"initiative_id": "nope"}}), "widgets[0].params", false},
		{widget(map[string]any{"type": "trends", "title": "t", "params": map[string]any{"from": "2019-01", "to": "2024-12"}}), "widgets[0].params", false},
		{widget(map[string]any{"type": "trends", "title": "t", "params": map[string]any{"group_by": 3}}), "widgets[0].params", true},
		{widget(map[string]any{"type": "roi", "title": " "}), "widgets[0].title", false},
		{widget(map[string]any{"type": "roi", "title": "t", "size": 3}), "widgets[0].size", false},
		{map[string]any{"name": "x", "widgets": []any{"roi"}}, "widgets[0]", true},
		{map[string]any{"name": "x", "widgets": many}, "widgets", true},
		{map[string]any{"name": "x"}, "widgets", true},
		{map[string]any{"name": "", "widgets": []any{}}, "name", true},
		{map[string]any{"name": "x", "visibility": "team", "widgets": []any{}}, "visibility", true},
		{map[string]any{"name": "x", "widgets": []any{}, "colour": "red"}, "colour", false},
	} {
		r := call(contractCall{as: &analyst, method: "POST", path: "/v1/dashboards", body: c.body, want: 422, code: "VALIDATION_ERROR", docRejects: c.docRejects, docSkip: !c.docRejects})
		if r.status == 422 && !strings.Contains(string(r.body), `"field":"`+c.field+`"`) {
			t.Errorf("%v: %s, want field %s", c.body, r.body, c.field)
		}
	}
	call(contractCall{as: &analyst, method: "PUT", path: minePath, body: map[string]any{"name": "x"}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
	// 400: malformed body, unknown query parameters.
	call(contractCall{as: &analyst, method: "POST", path: "/v1/dashboards", body: "{", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &analyst, method: "PUT", path: minePath, body: "[]", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	for _, path := range []string{"/v1/dashboards?visibility=team", "/v1/dashboards?page_size=201", "/v1/dashboards/portfolio?x=1", minePath + "?x=1", minePath + "/data?x=1"} {
		call(contractCall{as: &analyst, method: "GET", path: path, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	}
	call(contractCall{as: &analyst, method: "DELETE", path: minePath + "?x=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})

	// 409: 100 dashboards a user.
	ts.inTenant(func(tx pgx.Tx) error {
		_, err := tx.Exec(t.Context(), `INSERT INTO dashboards (tenant_id, name, visibility, owner_id, widgets)
			SELECT $1, 'd' || g, 'personal', 'analyst-2', '[]' FROM generate_series(1, 100) g`, ts.tenant)
		return err
	})
	call(contractCall{as: &analyst2, method: "POST", path: "/v1/dashboards", body: map[string]any{"name": "101st", "widgets": []any{}}, want: 409, code: "CONFLICT"})

	// The portfolio dashboard: P and Q active (R archived: not counted), the golden realisation;
	// an hours benefit at risk; a stakeholder at risk since a week ago (shown with stakeholders:read only).
	s := ts.createInitiative(admin, map[string]any{"name": "S"})
	hours := ts.createBenefit(admin, map[string]any{"initiative_id": s, "name": "Hours", "category": "productivity", "expected_value": 1200,
		"unit": "hours", "measurement_frequency": "monthly", "expected_start_date": "2024-01-01", "expected_end_date": "2024-12-31"})
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+hours+"/actuals", map[string]any{"value": 50, "period": "2024-05"}), 201)
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+hours+"/actuals", map[string]any{"value": 70, "period": "2024-06"}), 201)
	sh := ts.do(&admin, "POST", "/v1/stakeholders", map[string]any{"initiative_id": s, "name": "Ana", "email": "ana@example.com", "influence": "critical", "interest": "high"})
	expect(t, sh, 201)
	weekAgo := time.Now().UTC().AddDate(0, 0, -7).Format(time.DateOnly)
	ts.inTenant(func(tx pgx.Tx) error {
		_, err := tx.Exec(t.Context(), `UPDATE stakeholders SET at_risk_from = $1 WHERE id = $2`, weekAgo, sh.json(t)["id"])
		return err
	})
	r = call(contractCall{as: &analyst2, method: "GET", path: "/v1/dashboards/portfolio", want: 200})
	d := r.json(t)["data"].(map[string]any)
	if byStatus := d["initiatives_by_status"].([]any); len(byStatus) != 1 || byStatus[0].(map[string]any)["initiatives"] != 3.0 ||
		d["initiatives_count"] != 3.0 || fmt.Sprint(d["value"]) != "map[expected_measured_to_date:10200 expected_to_date:39500 expected_unmeasured_to_date:29300 "+
		"realization_percent:88.04 realized_to_date:8980 variance:-1220 variance_percent:-11.96]" ||
		d["at_risk_benefits_count"] != 1.0 || d["at_risk_benefits"].([]any)[0].(map[string]any)["benefit_id"] != hours || d["at_risk_stakeholders_count"] != 1.0 {
		t.Errorf("portfolio: %s", r.body)
	}
	if st := d["at_risk_stakeholders"].([]any)[0].(map[string]any); st["name"] != "Ana" || st["initiative_name"] != "S" || st["at_risk_since"] != weekAgo {
		t.Errorf("stakeholder at risk: %v", st)
	}
	r = call(contractCall{as: &analyst, method: "GET", path: "/v1/dashboards/portfolio", want: 200})
	if d := r.json(t)["data"].(map[string]any); d["at_risk_stakeholders"] != nil || d["at_risk_stakeholders_count"] != nil {
		t.Errorf("stakeholders without stakeholders:read: %s", r.body)
	}
	// Another tenant's portfolio is empty, and it sees none of these dashboards.
	r = call(contractCall{as: &other, method: "GET", path: "/v1/dashboards/portfolio", want: 200})
	if d := r.json(t)["data"].(map[string]any); d["initiatives_count"] != 0.0 || len(d["at_risk_benefits"].([]any)) != 0 || d["at_risk_stakeholders_count"] != 0.0 {
		t.Errorf("other tenant's portfolio: %s", r.body)
	}
	call(contractCall{as: &other, method: "GET", path: "/v1/dashboards/" + board["id"].(string), want: 404, code: "NOT_FOUND"})
	call(contractCall{as: &other, method: "GET", path: "/v1/dashboards/nope", want: 404, code: "NOT_FOUND"})

	// 401, 403 on every route: no token; no analytics:read; another tenant's token naming this one.
	ops := []contractCall{
		{method: "GET", path: "/v1/dashboards"}, {method: "POST", path: "/v1/dashboards", body: map[string]any{"name": "x", "widgets": []any{}}},
		{method: "GET", path: "/v1/dashboards/portfolio"}, {method: "GET", path: minePath},
		{method: "PUT", path: minePath, body: map[string]any{"name": "x", "widgets": []any{}}}, {method: "DELETE", path: minePath},
		{method: "GET", path: minePath + "/data"},
	}
	for _, op := range ops {
		call(contractCall{method: op.method, path: op.path, body: op.body, want: 401, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &reader, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &other, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ts.tenant.String()}, want: 403, code: "AUTHORIZATION_ERROR"})
	}
	// 413, 415 on every operation with a body.
	big := `{"name":"` + strings.Repeat("a", 6<<20) + `"}`
	for _, op := range ops {
		if op.body == nil {
			continue
		}
		call(contractCall{as: &admin, method: op.method, path: op.path, body: big, want: 413, network: true, code: "INVALID_PARAMETER"})
		call(contractCall{as: &admin, method: op.method, path: op.path, body: `{}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
	}

	// 204: the owner deletes; then 404.
	call(contractCall{as: &analyst, method: "DELETE", path: minePath, want: 204})
	call(contractCall{as: &analyst, method: "GET", path: minePath, want: 404, code: "NOT_FOUND"})

	// 429 for a starter tenant over its burst, then 503 with the database gone.
	cc.limitsAndOutage(t, ts, admin, "/v1/dashboards", ops)

	for _, u := range cc.uncovered([]string{"dashboards"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}

// jsonOf decodes a JSON object.
func jsonOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
