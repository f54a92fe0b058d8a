package api_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/integration/provider"
)

// TestActualPathsLeaveIdenticalRecords: an actual filed by the single route, by
// an actuals import and by an integration's sync leaves the same actual row,
// the same revision rows and the same benefit.actual_recorded events (apart
// from ids, timestamps and who filed it: the caller, or the integration as
// source), and all three refuse a correction past the cap.
func TestActualPathsLeaveIdenticalRecords(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	ctx := context.Background()
	initID := ts.createInitiative(admin, map[string]any{"name": "Three paths"})
	single := ts.createBenefit(admin, benefitBody(initID, "Filed one by one"))
	imported := ts.createBenefit(admin, benefitBody(initID, "Filed by import"))
	synced := ts.createBenefit(admin, benefitBody(initID, "Filed by sync"))
	integrationID := uuid.New()
	source := integration.Source(integrationID)
	target := integration.Target{TenantID: ts.tenant, IntegrationID: integrationID, Provider: provider.HTTPFeed}
	period := monthsAgo(2)

	sync := func(value string) integration.Counts {
		t.Helper()
		var c integration.Counts
		item := provider.Item{ExternalID: "row-" + value, Actual: &provider.ActualFields{BenefitKey: synced, Period: period, Value: value,
			EvidenceURL: "https://finance.example.com/close"}}
		if err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
			var err error
			c, err = integration.WritePage(ctx, tx, target, []provider.Item{item}, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	file := func(value float64, wantStatus int, wantRow string) {
		t.Helper()
		expect(t, ts.do(&admin, "POST", "/v1/benefits/"+single+"/actuals",
			map[string]any{"value": value, "period": period, "evidence_url": "https://finance.example.com/close"}), wantStatus)
		r := ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "actuals", "mode": "upsert", "records": []map[string]any{
			{"benefit_id": imported, "value": value, "period": period, "evidence_url": "https://finance.example.com/close"}}})
		expect(t, r, 200)
		if got := r.json(t)["results"].([]any)[0].(map[string]any)["status"]; got != wantRow {
			t.Errorf("import of %v: row %v, want %s", value, got, wantRow)
		}
		c := sync(fmt.Sprint(value))
		if want := map[string]int{"created": 1, "updated": 1}[wantRow]; c.Created+c.Updated != want || c.Failed != 0 {
			t.Errorf("sync of %v: %+v, want %s", value, c, wantRow)
		}
	}
	file(900, 201, "created")
	file(950.5, 200, "updated")

	// The rows, the revisions and the events of each benefit, as stored.
	type record struct {
		actual    map[string]any
		revisions []map[string]any
		events    []map[string]any
	}
	read := func(benefitID string) record {
		t.Helper()
		var r record
		err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
			rows := func(sql string, args ...any) ([]map[string]any, error) {
				res, err := tx.Query(ctx, sql, args...)
				if err != nil {
					return nil, err
				}
				return pgx.CollectRows(res, pgx.RowToMap)
			}
			actuals, err := rows(`SELECT period::text, value::text, notes, evidence_url, recorded_by, source, created_at = updated_at AS never_changed
				FROM benefit_actuals WHERE benefit_id = $1`, benefitID)
			if err != nil || len(actuals) != 1 {
				return fmt.Errorf("actuals %v: %w", actuals, err)
			}
			r.actual = actuals[0]
			if r.revisions, err = rows(`SELECT r.old_value::text, r.new_value::text, r.old_notes, r.old_evidence_url, r.changed_by
				FROM benefit_actual_revisions r JOIN benefit_actuals a ON a.id = r.actual_id WHERE a.benefit_id = $1 ORDER BY r.id`, benefitID); err != nil {
				return err
			}
			r.events, err = rows(`SELECT data FROM outbox_events WHERE type = 'benefit.actual_recorded' AND data->'benefit'->>'id' = $1 ORDER BY seq`, benefitID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// who filed: the caller, or the integration (recorded_by, changed_by and source).
	person, feed := read(single), read(synced)
	if person.actual["recorded_by"] != "admin-1" || person.actual["source"] != nil || feed.actual["recorded_by"] != source || feed.actual["source"] != source {
		t.Errorf("who filed: single %v / %v, sync %v / %v", person.actual["recorded_by"], person.actual["source"], feed.actual["recorded_by"], feed.actual["source"])
	}
	// The single route's record first: the others compare with it once it is stripped of ids and times.
	for _, path := range []struct {
		name string
		r    record
	}{{"single", person}, {"import", read(imported)}, {"sync", feed}} {
		name, r := path.name, path.r
		delete(r.actual, "recorded_by")
		delete(r.actual, "source")
		for _, rev := range r.revisions {
			delete(rev, "changed_by")
		}
		for i, e := range r.events {
			data := e["data"].(map[string]any) // jsonb, decoded
			b := data["benefit"].(map[string]any)
			if b["id"] == "" || data["actual_id"] == "" || data["recorded_at"] == "" || data["recorded_by"] == "" {
				t.Errorf("%s event %d lacks a value: %v", name, i, data)
			}
			delete(b, "id")
			delete(b, "name")
			for _, k := range []string{"actual_id", "recorded_at", "recorded_by"} {
				delete(data, k)
			}
			r.events[i] = data
		}
		want := record{
			actual:    map[string]any{"period": period + "-01", "value": "950.5", "notes": "", "evidence_url": "https://finance.example.com/close", "never_changed": false},
			revisions: []map[string]any{{"old_value": "900", "new_value": "950.5", "old_notes": "", "old_evidence_url": "https://finance.example.com/close"}},
		}
		if !reflect.DeepEqual(r.actual, want.actual) || !reflect.DeepEqual(r.revisions, want.revisions) {
			t.Errorf("%s: actual %v revisions %v, want %v %v", name, r.actual, r.revisions, want.actual, want.revisions)
		}
		if len(r.events) != 2 {
			t.Fatalf("%s: %d events, want 2 (first value, correction)", name, len(r.events))
		}
		first, correction := r.events[0], r.events[1]
		if first["value"] != 900.0 || first["corrected"] != false || first["previous_value"] != nil ||
			correction["value"] != 950.5 || correction["corrected"] != true || correction["previous_value"] != 900.0 {
			t.Errorf("%s events: %v", name, r.events)
		}
		if keys := slices.Sorted(maps.Keys(first)); strings.Join(keys, ",") != "benefit,corrected,evidence_url,initiative,notes,period,previous_value,value" {
			t.Errorf("%s event fields: %v", name, keys)
		}
		if !reflect.DeepEqual(r.events, person.events) {
			t.Errorf("%s events %v differ from the single route's %v", name, r.events, person.events)
		}
	}

	// The cap on corrections holds on every path: each period's history is full.
	if err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO benefit_actual_revisions (tenant_id, actual_id, old_value, new_value, old_notes, changed_by)
			SELECT a.tenant_id, a.id, 1, 2, '', 'seed' FROM benefit_actuals a, generate_series(1, 99)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	expect(t, ts.do(&admin, "POST", "/v1/benefits/"+single+"/actuals", map[string]any{"value": 1, "period": period}), 409, "CONFLICT")
	r := ts.do(&admin, "POST", "/v1/bulk/import", map[string]any{"resource": "actuals", "mode": "upsert", "records": []map[string]any{
		{"benefit_id": imported, "value": 1, "period": period}}})
	expect(t, r, 200)
	if row := r.json(t)["results"].([]any)[0].(map[string]any); row["status"] != "error" || !strings.Contains(fmt.Sprint(row["errors"]), "conflict") {
		t.Errorf("import past the cap: %v", row)
	}
	if c := sync("1"); c.Failed != 1 || len(c.Errors) != 1 || !strings.Contains(c.Errors[0].Message, "corrected the maximum of 100 times") {
		t.Errorf("sync past the cap: %+v", c)
	}
}
