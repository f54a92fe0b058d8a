package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/rbac"
)

var bulkSuite = suite{
	name: "bulk",
	help: "POST /v1/bulk/import of 10,000 actuals in one call against a raw COPY of the same rows into benefit_actuals",
	run:  runBulk,
}

const (
	bulkRows     = 10_000
	bulkBenefits = 40 // × 250 months from January 2000
	// Targets: one call under 2 s, and at least half the rows/s of the raw COPY.
	bulkMaxCall  = 2 * time.Second
	bulkMinRatio = 0.5
)

// runBulk alternates, round by round, one import of 10,000 new actuals
// through the API with a COPY of 10,000 equal rows (fresh benefits for each
// side and round, so both only insert). Each side reports one sample per row
// spanning the whole call, so rows/s is rows over the call's time.
func runBulk(ctx context.Context, e *env) error {
	const run = "POST /v1/bulk/import (10,000 actuals)"
	perms := []string{string(rbac.InitiativesWrite), string(rbac.BenefitsRead), string(rbac.BenefitsWrite)}
	t, err := benchutil.NewTenant(ctx, e.pool, e.keys, "bench bulk "+time.Now().UTC().Format(time.RFC3339Nano), benchSubject, []string{rbac.RoleAdmin}, perms)
	if err != nil {
		return err
	}
	var initID uuid.UUID
	if err := db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `INSERT INTO initiatives (tenant_id, name) VALUES ($1, 'Bulk benchmark') RETURNING id`, t.ID).Scan(&initID)
	}); err != nil {
		return err
	}
	// The baseline COPYs into benefit_actuals itself, which takes a role that bypasses row security.
	var copyPool *pgxpool.Pool
	if u := os.Getenv("BENCH_COPY_DATABASE_URL"); u != "" {
		if copyPool, err = db.NewPool(ctx, u); err != nil { // the API's pool settings and type codecs
			return err
		}
		defer copyPool.Close()
	}
	var copyInto string
	var calls []time.Duration
	apiSide := func(ctx context.Context, r int) ([]benchutil.Sample, int, error) {
		benefits, err := e.bulkBenefits(ctx, t, initID, r, "api")
		if err != nil {
			return nil, 0, err
		}
		body, err := json.Marshal(map[string]any{"resource": "actuals", "mode": "create", "records": bulkRecords(benefits)})
		if err != nil {
			return nil, 0, err
		}
		req, err := e.request(ctx, http.MethodPost, "/v1/bulk/import", t, body)
		if err != nil {
			return nil, 0, err
		}
		start := time.Now()
		resp, err := e.client.Do(req)
		if err != nil {
			return nil, 1, nil
		}
		data, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		end := time.Now()
		var got struct {
			Committed bool `json:"committed"`
			Summary   struct{ Created int }
		}
		_ = json.Unmarshal(data, &got)
		if resp.StatusCode != http.StatusOK || !got.Committed || got.Summary.Created != bulkRows {
			e.fail(run, fmt.Sprintf("API round %d", r+1), fmt.Sprintf("%s: %.300s", resp.Status, data))
			return nil, 1, nil
		}
		calls = append(calls, end.Sub(start))
		logf("%s round %d: API %s", run, r+1, end.Sub(start).Round(time.Millisecond))
		return rowSamples(start, end), 0, nil
	}
	baseSide := func(ctx context.Context, r int) ([]benchutil.Sample, int, error) {
		benefits, err := e.bulkBenefits(ctx, t, initID, r, "copy")
		if err != nil {
			return nil, 0, err
		}
		rows := make([][]any, 0, bulkRows)
		for _, rec := range bulkRecords(benefits) {
			p, _ := time.Parse("2006-01", rec["period"].(string))
			rows = append(rows, []any{t.ID, uuid.New(), uuid.MustParse(rec["benefit_id"].(string)), p, rec["value"], rec["notes"], benchSubject})
		}
		cols := []string{"tenant_id", "id", "benefit_id", "period", "value", "notes", "recorded_by"}
		target, into := e.pool, pgx.Identifier{"benefit_actuals"}
		copyInto = "benefit_actuals, as the superuser of BENCH_COPY_DATABASE_URL (COPY FROM refuses a table with row security to any other role)"
		if copyPool == nil {
			into, copyInto = pgx.Identifier{"bulk_copy"}, "a temporary table LIKE benefit_actuals INCLUDING ALL (no BENCH_COPY_DATABASE_URL: row security refuses COPY FROM into benefit_actuals to the API's role)"
		} else {
			target = copyPool
		}
		start := time.Now()
		err = db.InTenant(ctx, target, t.ID, func(tx pgx.Tx) error {
			if copyPool == nil {
				if _, err := tx.Exec(ctx, `CREATE TEMP TABLE bulk_copy (LIKE benefit_actuals INCLUDING ALL) ON COMMIT DROP`); err != nil {
					return err
				}
			}
			_, err := tx.CopyFrom(ctx, into, cols, pgx.CopyFromRows(rows))
			return err
		})
		end := time.Now()
		if err != nil {
			return nil, 0, fmt.Errorf("copy: %w", err)
		}
		logf("%s round %d: COPY %s", run, r+1, end.Sub(start).Round(time.Millisecond))
		return rowSamples(start, end), 0, nil
	}
	res, err := benchutil.Alternate(ctx, e.rounds, apiSide, baseSide)
	if err != nil {
		return fmt.Errorf("%s: %w", run, err)
	}
	// No worker runs in this suite: publish the imports' events unrelayed, or the workers of the
	// suites that follow would expand their batches inside their own measurements.
	if err := e.publishTenantEvents(ctx, t.ID); err != nil {
		return err
	}
	slowest := time.Duration(0)
	for _, c := range calls {
		slowest = max(slowest, c)
	}
	cmp := benchutil.NewComparison(run, "raw COPY (pgx CopyFrom) of the same 10,000 rows into "+copyInto+", one transaction", 1, res,
		fmt.Sprintf("each round: %d new actuals of %d monthly benefits (fresh benefits per side and round, so both only insert), as one JSON body, mode create; one sample per row spanning the call, so per_second is rows/s and p50 is the call's time", bulkRows, bulkBenefits),
		"the API side includes HTTP, JSON decoding, each row's checks of POST /v1/benefits/{id}/actuals, the multi-row insert of the actuals (row security makes COPY FROM unavailable to the API's role, so it is an INSERT ... SELECT unnest(...) statement) with the same triggers as COPY's, the outbox batch row holding the 10,000 benefit.actual_recorded events (the relay, not running here, expands it after commit), and the 10,000 per-row results",
		fmt.Sprintf("targets: each call under %s (slowest: %s) and at least %.0f %% of COPY's rows/s (got %.0f %%)", bulkMaxCall, slowest.Round(time.Millisecond), bulkMinRatio*100, 100*benchutil.Ratio(res.API.PerSecond, res.Baseline.PerSecond)),
	)
	cmp.SideNames = []string{"bulk import (rows)", "raw COPY (rows)"}
	e.report.Runs = append(e.report.Runs, cmp)
	if slowest > bulkMaxCall {
		e.fail(run, "API", fmt.Sprintf("slowest call %s, over the %s target", slowest.Round(time.Millisecond), bulkMaxCall))
	}
	if ratio := benchutil.Ratio(res.API.PerSecond, res.Baseline.PerSecond); ratio < bulkMinRatio {
		e.fail(run, "ratio", fmt.Sprintf("%.2f of COPY's rows/s, under the %.2f target", ratio, bulkMinRatio))
	}
	return nil
}

// bulkBenefits inserts the benefits one side of one round files actuals for.
func (e *env) bulkBenefits(ctx context.Context, t benchutil.Tenant, initID uuid.UUID, round int, side string) ([]string, error) {
	var ids []string
	err := db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit,
			measurement_frequency, expected_start_date, owner_id)
			SELECT $1, $2, $3 || g, 'cost_savings', 12000, 'EUR', 'currency', 'monthly', '2000-01-01', 'bench'
			FROM generate_series(1, $4::int) g RETURNING id`, t.ID, initID, fmt.Sprintf("%s %d ", side, round), bulkBenefits)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id uuid.UUID
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id.String())
		}
		return rows.Err()
	})
	return ids, err
}

// bulkRecords are 10,000 actuals: 250 months from January 2000 for each benefit.
func bulkRecords(benefits []string) []map[string]any {
	out := make([]map[string]any, bulkRows)
	for i := range out {
		m := i / len(benefits)
		out[i] = map[string]any{"benefit_id": benefits[i%len(benefits)], "period": fmt.Sprintf("%04d-%02d", 2000+m/12, m%12+1),
			"value": float64(1000 + i%997), "notes": "monthly close"}
	}
	return out
}

// rowSamples is one sample per row, each spanning the whole call.
func rowSamples(start, end time.Time) []benchutil.Sample {
	s := make([]benchutil.Sample, bulkRows)
	for i := range s {
		s[i] = benchutil.Sample{Start: start, End: end}
	}
	return s
}
