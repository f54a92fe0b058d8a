package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/integration"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
	"github.com/valuecase/valuecase/internal/rbac"
)

var (
	syncRecords  int
	syncPageSize int
)

var syncSuite = suite{
	name: "sync",
	help: "an http_feed integration's sync of 10,000 records (pages of 200) end to end (POST /sync → succeeded, API + worker on a Temporal dev server), fresh and re-sync; against the same page upserts straight into PostgreSQL",
	flags: func(fs *flag.FlagSet) {
		fs.IntVar(&syncRecords, "sync-records", envInt("BENCH_SYNC_RECORDS", 10_000), "sync: records the fake feed serves [BENCH_SYNC_RECORDS]")
		fs.IntVar(&syncPageSize, "sync-page-size", envInt("BENCH_SYNC_PAGE_SIZE", 200), "sync: records per feed page [BENCH_SYNC_PAGE_SIZE]")
	},
	run: runSync,
}

// syncGoal is the goal for 10,000 records end to end.
const syncGoal = 10 * time.Second

// runSync measures a sync of the fake http_feed provider. http_feed is the
// provider whose page write is the heaviest (benefit.FileActuals: the checks,
// the multi-row insert or correction with revisions, the events), and the only one that can take 10,000
// records into one tenant: salesforce and hubspot write initiatives, of which
// a tenant holds at most 1,000.
//
// Each round, on each side, a fresh tenant with the benefits the feed names:
// the first sync creates every actual, the re-sync finds all of them
// unchanged. Rounds alternate which side goes first.
func runSync(ctx context.Context, e *env) error {
	if exportTemporal == "" {
		return errors.New("the sync suite needs a Temporal frontend (--temporal or BENCH_TEMPORAL_ADDRESS; make bench starts a dev server)")
	}
	if syncRecords < 1 || syncPageSize < 1 || syncPageSize > 1000 {
		return errors.New("want --sync-records >= 1 and --sync-page-size in 1..1000")
	}
	feed := providertest.NewFeed(nil, providertest.Options{Records: syncRecords, PageSize: syncPageSize})
	defer feed.Close()
	stopWorker, _, err := e.startWorker(ctx, "sync", exportTemporal)
	if err != nil {
		return err
	}
	defer stopWorker()
	// Earlier suites' events are published first (by this worker), so no sync queues behind them;
	// then the worker's Temporal pollers are up too.
	if err := e.waitOutboxDrained(ctx, 2*time.Minute); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)

	pages := syncPages(syncRecords, syncPageSize)
	const run = "sync"
	var (
		apiFresh, apiResync, dbFresh, dbResync [][]benchutil.Sample
		apiErrs                                int
		syncPagesSeen                          int
	)
	apiSide := func(r int) error {
		t, err := e.syncTenant(ctx, r, "api", syncRecords)
		if err != nil {
			return err
		}
		var in struct {
			ID string `json:"id"`
		}
		if err := e.post(ctx, t, "/v1/integrations", map[string]any{"provider": "http_feed", "name": "Finance feed (bench)",
			"config": map[string]any{"instance_url": feed.URL, "oauth_token": feed.Token()}}, &in); err != nil {
			return err
		}
		var fresh, resync []benchutil.Sample
		for i, want := range []string{"created", "unchanged"} {
			start := time.Now()
			st, err := e.syncOnce(ctx, t, in.ID, 120*time.Second)
			end := time.Now()
			if err == nil && (st.Status != "succeeded" || st.Counts[want] != syncRecords || st.Counts["fetched"] != syncRecords) {
				err = fmt.Errorf("sync %s, counts %v; want %d %s", st.Status, st.Counts, syncRecords, want)
			}
			if err != nil {
				apiErrs++
				e.fail(run, "end to end, "+want, err.Error())
				continue
			}
			syncPagesSeen = st.Pages
			if i == 0 {
				fresh = append(fresh, benchutil.Sample{Start: start, End: end})
			} else {
				resync = append(resync, benchutil.Sample{Start: start, End: end})
			}
		}
		apiFresh, apiResync = append(apiFresh, fresh), append(apiResync, resync)
		return nil
	}
	dbSide := func(r int) error {
		t, err := e.syncTenant(ctx, r, "sql", syncRecords)
		if err != nil {
			return err
		}
		actor, inputs, err := e.syncInputs(ctx, t.ID, pages)
		if err != nil {
			return err
		}
		for i, want := range []benefit.Filing{benefit.FirstValue, benefit.SameValue} {
			n := 0
			start := time.Now()
			for _, page := range inputs {
				err := db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
					out, err := benefit.FileActuals(ctx, tx, actor, page, benefit.FileOptions{LastWins: true, Now: time.Now()})
					for _, o := range out {
						if o.Err == nil && o.Filing == want {
							n++
						}
					}
					return err
				})
				if err != nil {
					return err
				}
			}
			s := benchutil.Sample{Start: start, End: time.Now()}
			if n != syncRecords {
				return fmt.Errorf("baseline: %d of %d inputs filed as %v", n, syncRecords, want)
			}
			if i == 0 {
				dbFresh = append(dbFresh, []benchutil.Sample{s})
			} else {
				dbResync = append(dbResync, []benchutil.Sample{s})
			}
		}
		return nil
	}
	for r := range e.rounds {
		sides := []func(int) error{apiSide, dbSide}
		if r%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			if err := side(r); err != nil {
				return fmt.Errorf("round %d: %w", r+1, err)
			}
		}
		logf("sync: round %d of %d done", r+1, e.rounds)
	}

	baseline := fmt.Sprintf("the same %d pages filed by benefit.FileActuals (what the sync activity runs on each page: the checks, the multi-row insert or correction, the outbox batch row of the events), one tenant transaction per page, from a Go loop in the benchmark process, one after the other", len(pages))
	for i, c := range []struct {
		name, outcome string
		api, db       [][]benchutil.Sample
	}{
		{"sync 10k records (fresh)", "created", apiFresh, dbFresh},
		{"re-sync 10k (all unchanged)", "unchanged", apiResync, dbResync},
	} {
		got := benchutil.Compared{API: benchutil.SummarizeRounds(c.api, 0), Baseline: benchutil.SummarizeRounds(c.db, 0)}
		if i == 0 {
			got.API.Errors = apiErrs
		}
		var byRound []string
		for r := range c.api {
			got.AddRound(c.api[r], c.db[r])
			byRound = append(byRound, fmt.Sprintf("%s / %s", syncSeconds(c.api[r]), syncSeconds(c.db[r])))
		}
		name := strings.Replace(c.name, "10k", fmt.Sprintf("%d", syncRecords), 1)
		cmp := benchutil.NewComparison(name, baseline, 1, got,
			fmt.Sprintf("one sync per side and round, each round on fresh tenants with the %d benefits the feed names; the fake http_feed (internal/integration/provider/providertest, in the benchmark process on 127.0.0.1) serves %d records in %d pages of %d (the worker fetched %d pages); every sync must report %d %s",
				(syncRecords+11)/12, syncRecords, len(pages), syncPageSize, syncPagesSeen, syncRecords, c.outcome),
			"end to end = POST /v1/integrations/{id}/sync → 202, the outbox relay starts the workflow, the activity fetches each page over HTTP, validates it (benefits by key, values, periods) and upserts it in one transaction with the sync's progress, GET the status URL every 25 ms until succeeded",
			fmt.Sprintf("goal: %d records under %s end to end (p99 %.0f ms, %.0f records/s at p50; the baseline %.0f records/s at p50): %s",
				syncRecords, syncGoal, got.API.P99MS, recordsPerSecond(got.API.P50MS), recordsPerSecond(got.Baseline.P50MS), passFail(got.API.Count > 0 && got.API.P99MS <= float64(syncGoal.Milliseconds()))),
			"seconds by round (end to end / filing only): "+strings.Join(byRound, ", "),
			"ratio end to end / filing only = what HTTP fetching and parsing, validation, Temporal (workflow, activity, heartbeats) and the status polling add to the filing itself",
		)
		cmp.SideNames = []string{"end to end (POST → succeeded)", "filing only (FileActuals loop)"}
		e.report.Runs = append(e.report.Runs, cmp)
	}
	return nil
}

// syncSeconds is a round's one sync in seconds ("-" when it failed).
func syncSeconds(samples []benchutil.Sample) string {
	if len(samples) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", samples[0].End.Sub(samples[0].Start).Seconds())
}

func recordsPerSecond(ms float64) float64 {
	if ms <= 0 {
		return 0
	}
	return float64(syncRecords) / (ms / 1000)
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// syncPages are the feed's records by page, as providertest.FeedRow makes them.
func syncPages(records, size int) [][]int {
	var out [][]int
	for lo := 0; lo < records; lo += size {
		var p []int
		for i := lo; i < min(lo+size, records); i++ {
			p = append(p, i)
		}
		out = append(out, p)
	}
	return out
}

// syncTenant is a fresh tenant with an initiative and the benefits the rows
// of a feed of records name (external keys B-0 …, monthly from 2024-01).
func (e *env) syncTenant(ctx context.Context, round int, side string, records int) (benchutil.Tenant, error) {
	perms := []string{string(rbac.AdminConfig), string(rbac.InitiativesWrite), string(rbac.InitiativesRead)}
	t, err := benchutil.NewTenant(ctx, e.pool, e.keys, fmt.Sprintf("bench sync %d %s %s", round+1, side, time.Now().UTC().Format(time.RFC3339Nano)), benchSubject, []string{rbac.RoleAdmin}, perms)
	if err != nil {
		return t, err
	}
	var in struct {
		ID string `json:"id"`
	}
	if err := e.post(ctx, t, "/v1/initiatives", map[string]any{"name": "Sync benchmark"}, &in); err != nil {
		return t, err
	}
	err = db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit,
			measurement_frequency, expected_start_date, owner_id, external_key)
			SELECT $1, $2, 'Benefit ' || g, 'cost_savings', 1000, 'EUR', 'currency', 'monthly', '2024-01-01', $3, 'B-' || g
			FROM generate_series(0, $4 - 1) g`, t.ID, in.ID, t.Subject, (records+11)/12)
		return err
	})
	return t, err
}

// syncParams are the baseline's statements: each page's rows as the sync
// activity binds them (benefit ids by external key, the period's first day,
// the value, the evidence URL).
// syncInputs are the feed's pages as the sync activity files them (each record's benefit found
// by its key, the value an exact decimal), with the actor it files them as.
func (e *env) syncInputs(ctx context.Context, tenantID uuid.UUID, pages [][]int) (actor benefit.Actor, inputs [][]benefit.ActualInput, err error) {
	byKey := map[string]uuid.UUID{}
	err = db.InTenant(ctx, e.pool, tenantID, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT external_key, id FROM benefits WHERE external_key IS NOT NULL")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var id uuid.UUID
			if err := rows.Scan(&k, &id); err != nil {
				return err
			}
			byKey[k] = id
		}
		return rows.Err()
	})
	if err != nil {
		return actor, nil, err
	}
	source := integration.Source(uuid.New())
	actor = benefit.Actor{TenantID: tenantID, Subject: source, Source: &source}
	for _, page := range pages {
		var in []benefit.ActualInput
		for _, i := range page {
			key, period, value, evidence := providertest.FeedRow(i)
			id, ok := byKey[key]
			if !ok {
				return actor, nil, fmt.Errorf("no benefit %s", key)
			}
			v, err := decimal.NewFromString(value)
			if err != nil {
				return actor, nil, err
			}
			input := benefit.ActualInput{BenefitID: id, Period: period, Value: v}
			if evidence != "" { // as the sync reads a record: no evidence is none
				input.EvidenceURL = &evidence
			}
			in = append(in, input)
		}
		inputs = append(inputs, in)
	}
	return actor, inputs, nil
}

type syncStatus struct {
	Status string         `json:"status"`
	Pages  int            `json:"pages"`
	Counts map[string]int `json:"counts"`
	Error  *string        `json:"error"`
}

// syncOnce starts a sync of integration id and polls its status URL until it
// finished, for at most timeout.
func (e *env) syncOnce(ctx context.Context, t benchutil.Tenant, id string, timeout time.Duration) (syncStatus, error) {
	var created struct {
		StatusURL string `json:"status_url"`
	}
	if err := e.post(ctx, t, "/v1/integrations/"+id+"/sync", nil, &created); err != nil {
		return syncStatus{}, err
	}
	deadline := time.Now().Add(timeout)
	for {
		body, status, err := e.getBody(ctx, t, created.StatusURL)
		if err != nil {
			return syncStatus{}, err
		}
		var st syncStatus
		if status != http.StatusOK || json.Unmarshal(body, &st) != nil {
			return st, fmt.Errorf("GET %s: %d %.200s", created.StatusURL, status, body)
		}
		switch st.Status {
		case "succeeded", "partial":
			return st, nil
		case "failed":
			return st, fmt.Errorf("sync failed: %v", deref(st.Error))
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("sync still %s after %s (is the worker running?)", st.Status, timeout)
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}
