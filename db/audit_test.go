package db_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbtest"
)

// TestAuditTriggerPairsRowsOfOneStatement: the audit trigger runs once per
// statement (transition tables), yet every row gets its own event, an UPDATE
// of many rows pairs each row's old and new values, and a write with no actor
// in its context is recorded as "system".
func TestAuditTriggerPairsRowsOfOneStatement(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")

	// No WithActor: a write no request asked for.
	if err := db.InTenant(ctx, pool, tenant, func(tx db.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO initiatives (tenant_id, name, status) SELECT $1, 'I' || g, 'draft' FROM generate_series(1, 3) g", tenant)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	bulk := db.WithActor(ctx, "bulk-user", "req-bulk")
	if err := db.InTenant(bulk, pool, tenant, func(tx db.Tx) error {
		// Two rows renamed in one statement, one left as is; then a statement changing nothing.
		if _, err := tx.Exec(ctx, "UPDATE initiatives SET name = name || '-x' WHERE name IN ('I1', 'I3')"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE initiatives SET updated_at = now()"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM initiatives")
		return err
	}); err != nil {
		t.Fatal(err)
	}

	type event struct {
		actor, action, requestID string
		changes                  map[string]map[string]any
	}
	var events []event
	if err := db.InTenant(ctx, pool, tenant, func(tx db.Tx) error {
		rows, err := tx.Query(ctx, "SELECT actor, action, coalesce(request_id, ''), changes FROM audit_events WHERE resource_type = 'initiative' ORDER BY id")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e event
			var raw []byte
			if err := rows.Scan(&e.actor, &e.action, &e.requestID, &raw); err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &e.changes); err != nil {
				return err
			}
			events = append(events, e)
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	var actions []string
	renames := map[string]string{}
	for _, e := range events {
		actions = append(actions, e.actor+" "+e.action)
		if e.action == "update" {
			if e.requestID != "req-bulk" {
				t.Errorf("update event request id %q", e.requestID)
			}
			renames[e.changes["name"]["old"].(string)] = e.changes["name"]["new"].(string)
		}
	}
	want := []string{"system create", "system create", "system create", "bulk-user update", "bulk-user update",
		"bulk-user delete", "bulk-user delete", "bulk-user delete"}
	if !slices.Equal(actions, want) {
		t.Errorf("events %v, want %v", actions, want)
	}
	if len(renames) != 2 || renames["I1"] != "I1-x" || renames["I3"] != "I3-x" {
		t.Errorf("each update pairs its row's old and new name: %v", renames)
	}
}

// TestAuditCompositeKey: a table keyed by several columns (fx_rates: currency
// and period) is recorded under the key's values joined with ':', and its
// update pairs old and new by that key.
func TestAuditCompositeKey(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "starter")
	if err := db.InTenant(ctx, pool, tenant, func(tx db.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO fx_rates (tenant_id, currency, period, rate) VALUES ($1, 'EUR', '2026-01-01', 1.1), ($1, 'GBP', '2026-01-01', 1.3)", tenant); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE fx_rates SET rate = 1.2 WHERE currency = 'EUR'")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := db.InTenant(ctx, pool, tenant, func(tx db.Tx) error {
		rows, err := tx.Query(ctx, "SELECT action || ' ' || resource_id || ' ' || array_to_string(changed_fields, ',') || ' ' || changes::text FROM audit_events WHERE resource_type = 'fx_rate' ORDER BY id")
		if err != nil {
			return err
		}
		got, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`create EUR:2026-01-01 rate {"rate": {"new": 1.1}}`,
		`create GBP:2026-01-01 rate {"rate": {"new": 1.3}}`,
		`update EUR:2026-01-01 rate {"rate": {"new": 1.2, "old": 1.1}}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("fx_rate events\n got %q\nwant %q", got, want)
	}
}
