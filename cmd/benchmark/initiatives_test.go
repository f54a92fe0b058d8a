package main

import (
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/internal/benchutil"
)

// The pgbench scripts are built from db/queries: a renamed query or
// parameter fails here rather than in make bench.
func TestInitiativeScripts(t *testing.T) {
	q, err := benchutil.LoadQueries("../../db/queries")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{queries: q, workDir: t.TempDir()}
	tenant := benchutil.Tenant{ID: uuid.New(), Subject: "bench-user"}

	path, vars, err := e.createScript(tenant)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	script := string(b)
	for _, want := range []string{
		"BEGIN;\nSELECT set_config('app.tenant_id', :tenant_id, true);\n",
		"pg_advisory_xact_lock(hashtextextended('initiative-create:' || (:tenant_id::uuid)::text, 0));",
		"RETURNING * \\gset ins_\n",
		"unnest(ARRAY[:name::text]::text[]) AS name",
		"ROWS FROM (unnest(ARRAY[:ins_id::uuid]::uuid[]),",
		"COMMIT;\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("create script lacks %q:\n%s", want, script)
		}
	}
	if strings.Contains(script, "@") || strings.Contains(script, "sqlc.") {
		t.Errorf("create script keeps sqlc syntax:\n%s", script)
	}
	if vars["tenant_id"] != tenant.ID.String() || !strings.Contains(vars["event_data"], `"status":"draft"`) {
		t.Errorf("vars = %v", vars)
	}

	path, vars, err = e.listScript(tenant)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	script = string(b)
	// No filter: NULL parameters the planner cannot fold away (benchutil.Null).
	if !strings.Contains(script, "(NULLIF(:null_param, '-')::text IS NULL AND status <> 'archived' OR status = NULLIF(:null_param, '-')::text)") ||
		!strings.Contains(script, "LIMIT :page_limit OFFSET :page_offset;") {
		t.Errorf("list script:\n%s", script)
	}
	if vars["sort"] != "created_at" || vars["sort_desc"] != "true" || vars["page_limit"] != "50" {
		t.Errorf("vars = %v", vars)
	}
	// Planned for its parameters on every call, as the API plans it: a connection left to the
	// plan cache may keep a generic plan twice as slow, and the baseline would be the slow side.
	if !strings.Contains(script, "SELECT set_config(E'plan_cache_mode', E'force_custom_plan', true);\nSELECT initiatives.*") {
		t.Errorf("list script does not plan the list per call:\n%s", script)
	}
}

// The realisation's baseline runs its sums with the API's settings around them.
func TestAnalyticsScriptsSendTheAPISettings(t *testing.T) {
	q, err := benchutil.LoadQueries("../../db/queries")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{queries: q, workDir: t.TempDir()}
	path, err := e.analyticsScript("analytics-realization", realizationQueries, map[string]string{"initiative_id": benchutil.Null})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	script := string(b)
	set := "SELECT set_config(E'app.saved_enable_nestloop', current_setting(E'enable_nestloop'), true), set_config(E'enable_nestloop', E'off', true);\n"
	back := "SELECT set_config(E'enable_nestloop', current_setting(E'app.saved_enable_nestloop'), true);\n"
	sums, err := q.Get("AnalyticsRealizationSums")
	if err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(strings.TrimSpace(sums), "\n", 2)[0] // the statement's first line
	i, j, k := strings.Index(script, set), strings.Index(script, head), strings.Index(script, back)
	if i < 0 || j < 0 || k < 0 || !(i < j && j < k) || strings.Count(script, "E'enable_nestloop', E'off'") != 1 {
		t.Errorf("realisation script does not run its sums, and those alone, with nested loops off (set %d, sums %d, back %d):\n%s", i, j, k, script)
	}
	if !strings.Contains(joinNames(realizationQueries), "AnalyticsRealizationSums (with enable_nestloop = off)") {
		t.Errorf("baseline name %q does not show the setting", joinNames(realizationQueries))
	}
}
