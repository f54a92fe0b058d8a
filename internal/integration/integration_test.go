package integration_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/integration/provider"
)

func TestScheduleNormalize(t *testing.T) {
	for _, tc := range []struct {
		in      integration.Schedule
		want    integration.Schedule
		badKeys []string
	}{
		{in: integration.Schedule{}, want: integration.Schedule{Frequency: "manual", TimeZone: "UTC"}},
		{in: integration.Schedule{Frequency: "daily", TimeZone: "Europe/Berlin"}, want: integration.Schedule{Frequency: "daily", At: "00:00", TimeZone: "Europe/Berlin"}},
		{in: integration.Schedule{Frequency: "weekly", At: "23:59", DayOfWeek: "Sunday", TimeZone: "Asia/Kathmandu"}, want: integration.Schedule{Frequency: "weekly", At: "23:59", DayOfWeek: "sunday", TimeZone: "Asia/Kathmandu"}},
		{in: integration.Schedule{Frequency: "weekly", TimeZone: "UTC"}, badKeys: []string{"sync_schedule.day_of_week"}},
		{in: integration.Schedule{Frequency: "hourly", At: "01:00", DayOfWeek: "monday", TimeZone: "UTC"}, badKeys: []string{"sync_schedule.at", "sync_schedule.day_of_week"}},
		{in: integration.Schedule{Frequency: "daily", At: "7:00", TimeZone: "UTC"}, badKeys: []string{"sync_schedule.at"}},
		{in: integration.Schedule{Frequency: "daily", At: "12:60", TimeZone: "UTC"}, badKeys: []string{"sync_schedule.at"}},
		{in: integration.Schedule{Frequency: "monthly", TimeZone: "Local"}, badKeys: []string{"sync_schedule.frequency", "sync_schedule.timezone"}},
		{in: integration.Schedule{Frequency: "manual", TimeZone: "Europe/Atlantis"}, badKeys: []string{"sync_schedule.timezone"}},
	} {
		s := tc.in
		errs := s.Normalize()
		if len(errs) != len(tc.badKeys) {
			t.Errorf("%+v: errors %v, want keys %v", tc.in, errs, tc.badKeys)
			continue
		}
		for _, k := range tc.badKeys {
			if errs[k] == "" {
				t.Errorf("%+v: no error on %s (%v)", tc.in, k, errs)
			}
		}
		if len(tc.badKeys) == 0 && s != tc.want {
			t.Errorf("%+v normalised to %+v, want %+v", tc.in, s, tc.want)
		}
	}
}

func TestCheckTransition(t *testing.T) {
	for _, tc := range []struct {
		from, to integration.State
		others   int64
		want     error
	}{
		{integration.Paused, integration.Active, 9, nil},
		{integration.Paused, integration.Active, 10, integration.ErrLimit},
		{integration.Error, integration.Active, 10, integration.ErrLimit},
		{integration.Active, integration.Active, 10, nil}, // staying active never counts twice
		{integration.Active, integration.Paused, 10, nil},
		{integration.Error, integration.Paused, 0, nil},
		{integration.Disconnected, integration.Active, 0, integration.ErrDisconnected},
		{integration.Disconnected, integration.Paused, 0, integration.ErrDisconnected},
	} {
		if got := integration.CheckTransition(tc.from, tc.to, tc.others); !errors.Is(got, tc.want) {
			t.Errorf("%s → %s with %d others: %v, want %v", tc.from, tc.to, tc.others, got, tc.want)
		}
	}
	if err := integration.CheckSync(integration.Paused); err == nil {
		t.Error("a paused integration syncs")
	}
}

// WritePage upserts CRM records as initiatives by external id in one statement per page:
// created, then unchanged when written again, updated when a field changes; a name taken by
// another initiative, an empty name and an invalid item are failures that do not stop the
// rest; the owner's e-mail maps to the tenant's user; an archived initiative is left alone.
// Jira epics become projects of the mapped initiative.
func TestWritePageUpsertsIdempotently(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	target := integration.Target{TenantID: tenant, IntegrationID: uuid.New(), Provider: provider.Salesforce}
	var userID, takenID uuid.UUID
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "INSERT INTO users (tenant_id, email, name) VALUES ($1, 'owner@example.com', 'Owner') RETURNING id", tenant).Scan(&userID); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "INSERT INTO initiatives (tenant_id, name) VALUES ($1, 'Taken by hand') RETURNING id", tenant).Scan(&takenID)
	}); err != nil {
		t.Fatal(err)
	}
	opp := func(id, name, industry string) provider.Item {
		return provider.Item{ExternalID: id, Initiative: &provider.InitiativeFields{Name: name, Industry: industry, Segment: "New Business", Owner: "OWNER@example.com"}}
	}
	write := func(items ...provider.Item) integration.Counts {
		t.Helper()
		var c integration.Counts
		if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			var err error
			c, err = integration.WritePage(ctx, tx, target, items, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	page := []provider.Item{opp("006A", "Cloud migration", "Tech"), opp("006B", "taken by HAND", "Retail"), opp("006C", "  ", ""),
		{ExternalID: "006D", Invalid: "Name is missing"}, opp("006E", "ERP rollout", ""), opp("006E", "ERP rollout (v2)", "")}
	c := write(page...)
	if c.Fetched != 6 || c.Created != 2 || c.Failed != 3 || c.Unchanged != 1 || len(c.Errors) != 3 {
		t.Fatalf("first page: %+v", c)
	}
	c = write(page...)
	if c.Created != 0 || c.Updated != 0 || c.Unchanged != 3 || c.Failed != 3 {
		t.Fatalf("the same page again: %+v", c)
	}
	c = write(opp("006A", "Cloud migration", "Technology"))
	if c.Updated != 1 {
		t.Fatalf("a changed industry: %+v", c)
	}
	var name, owner, source string
	var industry *string
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT name, owner_id, industry, source FROM initiatives WHERE external_id = '006E'").Scan(&name, &owner, &industry, &source)
	}); err != nil {
		t.Fatal(err)
	}
	if name != "ERP rollout (v2)" || owner != userID.String() || industry != nil || source != "integration/"+target.IntegrationID.String() {
		t.Errorf("006E: %q owner %q source %q", name, owner, source)
	}
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE initiatives SET status = 'archived' WHERE external_id = '006A'")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if c = write(opp("006A", "Cloud migration 2", "Tech")); c.Unchanged != 1 {
		t.Errorf("an archived initiative changed: %+v", c)
	}

	// Jira: projects of the mapped initiative; an archived initiative stops the sync.
	jira := integration.Target{TenantID: tenant, IntegrationID: uuid.New(), Provider: provider.Jira, InitiativeID: takenID}
	epic := provider.Item{ExternalID: "10001", Project: &provider.ProjectFields{Key: "VC-1", Name: "Billing cutover", Status: "In Progress"}}
	var pc integration.Counts
	for range 2 {
		if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			var err error
			pc, err = integration.WritePage(ctx, tx, jira, []provider.Item{epic}, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if pc.Unchanged != 1 {
		t.Errorf("the epic written twice: %+v", pc)
	}
	var desc string
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT description FROM projects WHERE initiative_id = $1 AND external_id = '10001'", takenID).Scan(&desc)
	}); err != nil || desc != "VC-1 · In Progress" {
		t.Errorf("project: %q (%v)", desc, err)
	}
	jira.InitiativeID = uuid.New()
	err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		_, err := integration.WritePage(ctx, tx, jira, []provider.Item{epic}, time.Now())
		return err
	})
	if !errors.Is(err, integration.ErrTargetGone) {
		t.Errorf("a missing initiative: %v", err)
	}
}

// A feed names a benefit by its id (the uuid's canonical text) or its external_key; a key that is
// neither (not a uuid, a uuid of no benefit, an id in capitals) fails its item, never the page.
func TestWritePageResolvesBenefitKeys(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	target := integration.Target{TenantID: tenant, IntegrationID: uuid.New(), Provider: provider.HTTPFeed}
	uuidKey := uuid.New().String() // an external_key shaped like a uuid that is no benefit's id
	var byID, byKey, byUUIDKey uuid.UUID
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		var ini uuid.UUID
		if err := tx.QueryRow(ctx, "INSERT INTO initiatives (tenant_id, name, status) VALUES ($1, 'Feed', 'active') RETURNING id", tenant).Scan(&ini); err != nil {
			return err
		}
		insert := `INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, owner_id, external_key)
		           VALUES ($1, $2, $3, 'cost_savings', 1200, 'EUR', 'currency', 'monthly', '2026-01-01', 'owner', $4) RETURNING id`
		if err := tx.QueryRow(ctx, insert, tenant, ini, "by id", nil).Scan(&byID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, insert, tenant, ini, "by key", "K-1").Scan(&byKey); err != nil {
			return err
		}
		return tx.QueryRow(ctx, insert, tenant, ini, "by uuid key", uuidKey).Scan(&byUUIDKey)
	}); err != nil {
		t.Fatal(err)
	}
	actual := func(id, key string) provider.Item {
		return provider.Item{ExternalID: id, Actual: &provider.ActualFields{BenefitKey: key, Period: "2026-02", Value: "100"}}
	}
	var c integration.Counts
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		var err error
		c, err = integration.WritePage(ctx, tx, target, []provider.Item{
			actual("a", byID.String()), actual("b", " K-1 "), actual("c", uuidKey),
			actual("d", "not-a-uuid"), actual("e", uuid.New().String()), actual("f", strings.ToUpper(byID.String())), actual("g", "k-1"),
		}, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if c.Created != 3 || c.Failed != 4 {
		t.Fatalf("counts: %+v", c)
	}
	for i, e := range c.Errors {
		if want := string(rune('d' + i)); e.ExternalID != want || !strings.HasPrefix(e.Message, "no benefit has the id or external_key") {
			t.Errorf("error %d: %+v, want item %s not found", i, e, want)
		}
	}
	for _, id := range []uuid.UUID{byID, byKey, byUUIDKey} {
		var n int
		if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT count(*) FROM benefit_actuals WHERE benefit_id = $1 AND period = '2026-02-01' AND value = 100", id).Scan(&n)
		}); err != nil || n != 1 {
			t.Errorf("benefit %s: %d actuals (%v)", id, n, err)
		}
	}
}

// Looking up a page's benefit keys reads the benefits it names, not the tenant's others, also when
// the statistics were taken before the tenant had any (to the planner a new tenant looks empty).
// A scan of the tenant's benefits made each page of a large sync cost more than the one before.
func TestBenefitKeyLookupReadsOnlyTheNamedBenefits(t *testing.T) {
	const benefits = 3000
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	seed := func(tenant uuid.UUID, n int) {
		t.Helper()
		if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `WITH i AS (INSERT INTO initiatives (tenant_id, name, status) VALUES ($1, 'Feed', 'active') RETURNING id)
				INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency, expected_start_date, owner_id, external_key)
				SELECT $1, i.id, 'B ' || n, 'cost_savings', 1200, 'EUR', 'currency', 'monthly', '2026-01-01', 'owner', 'K-' || n
				FROM i, generate_series(1, $2) n`, tenant, n)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	seed(dbtest.NewTenant(t, pool, "enterprise"), 200)
	if _, err := pool.Exec(ctx, "ANALYZE benefits; ANALYZE initiatives"); err != nil {
		t.Fatal(err)
	}
	tenant := dbtest.NewTenant(t, pool, "enterprise")
	seed(tenant, benefits)
	var byID uuid.UUID
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT id FROM benefits WHERE external_key = 'K-7'").Scan(&byID)
	}); err != nil {
		t.Fatal(err)
	}
	keys := []string{"K-1", "K-2", "K-1", byID.String(), "K-none", uuid.NewString()}
	for i := range 200 - len(keys) { // a page of 200 items naming the same benefits
		keys = append(keys, keys[i%6])
	}
	rowsRead := func(tx pgx.Tx) int64 { return dbtest.RowsReadInTx(t, tx, "benefits") }
	if err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		before := rowsRead(tx)
		for round := range dbtest.PastCustomPlans {
			found, err := db.Q.SyncBenefitsByKey(ctx, tx, dbsqlc.SyncBenefitsByKeyParams{TenantID: tenant, Keys: keys})
			if err != nil {
				return err
			}
			ids, external := map[uuid.UUID]bool{}, map[string]bool{}
			for _, b := range found {
				ids[b.ID] = true
				if b.ExternalKey != nil {
					external[*b.ExternalKey] = true
				}
			}
			if !ids[byID] || len(ids) != 3 || !external["K-1"] || !external["K-2"] || !external["K-7"] || len(external) != 3 {
				t.Errorf("round %d: found %v", round, found) // K-1, K-2 and the benefit by id (K-7)
			}
		}
		if read := rowsRead(tx) - before; read > 7*10 {
			t.Errorf("7 lookups of a page naming 3 benefits read %d benefit rows of a tenant with %d", read, benefits)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
