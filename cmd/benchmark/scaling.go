package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
	"github.com/valuecase/valuecase/internal/rbac"
)

var scalingSuite = suite{
	name: "scaling",
	help: "time per unit as the work grows: portfolio realisation, trends and ROI at 10, 100 and 1,000 initiatives; bulk import of 10,000, 100,000 and 500,000 actuals (API + worker on a Temporal dev server); an http_feed sync of 10,000 and 100,000 records",
	flags: func(fs *flag.FlagSet) {
		fs.StringVar(&scalingParts, "scaling-parts", envOr("BENCH_SCALING_PARTS", "analytics,bulk,sync"), "scaling: the parts to run, a comma-separated subset of analytics,bulk,sync [BENCH_SCALING_PARTS]")
	},
	run: runScaling,
}

// scalingParts are the parts of the scaling suite to run (--scaling-parts).
var scalingParts string

// seededAnalytics is a tenant seedAnalytics wrote, with one of its initiatives.
type seededAnalytics struct {
	tenant     benchutil.Tenant
	initiative string
}

// largeAnalyticsTenant is the analytics suite's 1,000-initiative tenant when
// that suite ran earlier in this invocation: the scaling suite measures it as
// its 100x instead of seeding another (two minutes).
var largeAnalyticsTenant *seededAnalytics

// The analytics scales: 1x is a 10-initiative tenant shaped like the
// analytics suite's (10 monthly benefits × 36 actuals and a cost each).
var analyticsScales = []struct {
	scale       string
	initiatives int
}{{"1x", 10}, {"10x", 100}, {"100x", analyticsInitiatives}}

// analyticsScalingRounds: each round reads every endpoint once at every
// scale, so a slow spell of the shared machine lands on all of them.
const analyticsScalingRounds = 11

// The bulk import scales: at most bulk.MaxSyncRows (10,000) records are
// answered in the request, more become a job on the worker.
var bulkScales = []struct {
	scale            string
	records, samples int
}{{"1x", 10_000, 3}, {"10x", 100_000, 1}, {"50x", 500_000, 1}}

var syncScales = []struct {
	scale            string
	records, samples int
}{{"1x", 10_000, 3}, {"10x", 100_000, 1}}

func runScaling(ctx context.Context, e *env) error {
	if exportTemporal == "" {
		return errors.New("the scaling suite needs a Temporal frontend (--temporal or BENCH_TEMPORAL_ADDRESS; make bench starts a dev server): bulk jobs and syncs run on a worker")
	}
	part := map[string]bool{}
	for _, p := range strings.Split(strings.ReplaceAll(scalingParts, " ", ""), ",") {
		if p != "analytics" && p != "bulk" && p != "sync" {
			return fmt.Errorf("--scaling-parts: unknown part %q (have analytics, bulk, sync)", p)
		}
		part[p] = true
	}
	if part["analytics"] {
		if err := e.scaleAnalytics(ctx); err != nil {
			return err
		}
	}
	if !part["bulk"] && !part["sync"] {
		return nil
	}
	stopWorker, _, err := e.startWorker(ctx, "scaling", exportTemporal)
	if err != nil {
		return err
	}
	defer stopWorker()
	// Earlier suites' events are published first, so no job or sync queues behind them.
	if err := e.waitOutboxDrained(ctx, 2*time.Minute); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // the worker's Temporal pollers
	// A superuser sees the autovacuum workers (awaitAutovacuum).
	if u := os.Getenv("BENCH_COPY_DATABASE_URL"); u != "" {
		if e.admin, err = db.NewPool(ctx, u); err != nil {
			return err
		}
		defer e.admin.Close()
	}
	if part["bulk"] {
		if err := e.scaleBulk(ctx); err != nil {
			return err
		}
	}
	if part["sync"] {
		if err := e.scaleSync(ctx); err != nil {
			return err
		}
	}
	return nil
}

// scaleAnalytics reads portfolio realisation, trends and ROI of tenants of
// 10, 100 and 1,000 initiatives.
func (e *env) scaleAnalytics(ctx context.Context) error {
	load := benchutil.LoadAvg()
	tenants := make([]benchutil.Tenant, len(analyticsScales))
	// Largest first: seedAnalytics ends with ANALYZE, and the benefits' triggers plan the next
	// seeding's 10,000 benefits as a nested loop when the statistics say 1,100 (minutes, not seconds).
	for i := len(analyticsScales) - 1; i >= 0; i-- {
		sc := analyticsScales[i]
		if sc.initiatives == analyticsInitiatives && largeAnalyticsTenant != nil {
			logf("scaling: the analytics suite's tenant %s is the %s", largeAnalyticsTenant.tenant.ID, sc.scale)
			tenants[i] = largeAnalyticsTenant.tenant
			continue
		}
		name := fmt.Sprintf("bench scaling analytics %d %s", sc.initiatives, time.Now().UTC().Format(time.RFC3339Nano))
		t, err := benchutil.NewTenant(ctx, e.pool, e.keys, name, benchSubject, []string{rbac.RoleAdmin}, []string{string(rbac.AnalyticsRead)})
		if err != nil {
			return err
		}
		if _, err := e.seedAnalytics(ctx, t, sc.initiatives); err != nil {
			return err
		}
		if err := e.checkAnalytics(ctx, t, sc.initiatives); err != nil {
			e.fail("scaling analytics "+sc.scale, "check", err.Error())
		}
		tenants[i] = t
	}
	reads := []struct{ name, path string }{
		{"GET /v1/analytics/realization (portfolio)", "/v1/analytics/realization"},
		{"GET /v1/analytics/trends (36 months by category)", "/v1/analytics/trends?from=2023-01&to=2025-12&group_by=category"},
		{"GET /v1/analytics/roi (portfolio)", "/v1/analytics/roi"},
	}
	// samples[read][scale], and the requests that failed (the analytics deadline) with their times
	samples, failed := make([][][]time.Duration, len(reads)), make([][][]time.Duration, len(reads))
	for i := range samples {
		samples[i], failed[i] = make([][]time.Duration, len(analyticsScales)), make([][]time.Duration, len(analyticsScales))
	}
	var failures []string
	const warmup = 2
	for r := range warmup + analyticsScalingRounds {
		for s := range analyticsScales {
			// The reports are kept per data version (internal/analytics/cache.go): a write to an
			// input first, outside the timing, so each read computes its report, the cost that grows.
			if err := e.touchAnalyticsInput(ctx, tenants[s]); err != nil {
				return err
			}
			for i, rd := range reads {
				start := time.Now()
				body, status, err := e.getBody(ctx, tenants[s], rd.path)
				took := time.Since(start)
				if err != nil {
					return err
				}
				switch {
				case r < warmup:
				case status == http.StatusOK:
					samples[i][s] = append(samples[i][s], took)
				case status == http.StatusServiceUnavailable: // past ANALYTICS_TIMEOUT: a lower bound, shown as one
					failed[i][s] = append(failed[i][s], took)
				default:
					e.fail("scaling "+rd.name, analyticsScales[s].scale, fmt.Sprintf("%d %.300s", status, body))
				}
			}
		}
	}
	for i, rd := range reads {
		tab := benchutil.Scaling{Name: rd.name, Unit: "initiative", PerUnitIn: "ms"}
		for s, sc := range analyticsScales {
			// With requests given up on at the deadline, the median of all the times is only a
			// lower bound of the true one.
			if len(failed[i][s]) > 0 {
				tab.AddAtLeast(sc.scale, sc.initiatives, append(samples[i][s], failed[i][s]...))
			} else if len(samples[i][s]) > 0 {
				tab.Add(sc.scale, sc.initiatives, samples[i][s])
			}
			if n := len(failed[i][s]); n > 0 {
				msg := fmt.Sprintf("at %s, %d of %d requests answered 503 past the API's analytics deadline (ANALYTICS_TIMEOUT)", sc.scale, n, n+len(samples[i][s]))
				tab.Notes = append(tab.Notes, msg)
				failures = append(failures, rd.name+" "+msg)
			}
		}
		if i == 0 {
			tab.Notes = append(tab.Notes, fmt.Sprintf("tenants of 10, 100 and 1,000 initiatives, each initiative 10 monthly USD benefits × 36 actuals (2023-01 .. 2025-12) and a one-off cost, written by seedAnalytics and checked by checkAnalytics; 1 client, %d rounds after %d warm-up rounds, each round one request per endpoint and scale; total = the request's time (HTTP included); load average %s at the start", analyticsScalingRounds, warmup, load))
		}
		if largeAnalyticsTenant != nil && i == 0 {
			tab.Notes = append(tab.Notes, "the 100x tenant is the analytics suite's, which ran earlier in this invocation")
		}
		e.report.Scaling = append(e.report.Scaling, tab)
	}
	for _, f := range failures {
		e.report.Notes = append(e.report.Notes, "scaling: "+f+"; its row shows the time until then as a lower bound (≥)")
	}
	return nil
}

// scaleBulk imports 10,000, 100,000 and 500,000 new actuals as one CSV
// POST /v1/bulk/import each, the two larger as jobs followed to the end.
func (e *env) scaleBulk(ctx context.Context) error {
	load := benchutil.LoadAvg()
	perms := []string{string(rbac.InitiativesWrite), string(rbac.BenefitsRead), string(rbac.BenefitsWrite)}
	tab := benchutil.Scaling{Name: "POST /v1/bulk/import (actuals, CSV)", Unit: "record", PerUnitIn: "µs"}
	// A long upload: the shared client gives up after 30 s.
	client := &http.Client{Timeout: 10 * time.Minute, Transport: e.client.Transport}
	var sizes, walNotes, answeredNotes []string
	for _, sc := range bulkScales {
		t, err := benchutil.NewTenant(ctx, e.pool, e.keys, fmt.Sprintf("bench scaling bulk %d %s", sc.records, time.Now().UTC().Format(time.RFC3339Nano)), benchSubject, []string{rbac.RoleAdmin}, perms)
		if err != nil {
			return err
		}
		var samples scaleSamples
		for n := range sc.samples {
			body, err := e.scalingCSV(ctx, t, sc.records, n)
			if err != nil {
				return err
			}
			if n == 0 {
				sizes = append(sizes, fmt.Sprintf("%.1f MB", float64(len(body))/(1<<20)))
			}
			d, imported, err := samples.measure(ctx, e, t.ID, func() (time.Duration, error) {
				return e.importCSV(ctx, client, t, body, sc.records)
			})
			if err != nil {
				e.fail("scaling bulk import "+sc.scale, fmt.Sprintf("sample %d", n+1), err.Error())
				continue
			}
			logf("scaling: bulk import of %d actuals, sample %d: %s (imported after %s)", sc.records, n+1, d.Round(time.Millisecond), imported.Round(time.Millisecond))
		}
		if len(samples.took) > 0 {
			tab.Add(sc.scale, sc.records, samples.took)
			walNotes = append(walNotes, samples.wal.per(sc.scale, sc.records*len(samples.took)))
			answeredNotes = append(answeredNotes, perRecord(sc.scale, sc.records, samples.answered))
		}
	}
	tab.Notes = append(tab.Notes,
		fmt.Sprintf("each sample: new actuals of fresh monthly benefits (40 per 10,000 records, 250 months each from 2000-01, as the bulk suite's bulkRecords), one CSV body (%v), mode create, on an Enterprise Plus tenant (the 5/min bulk limit does not apply to it); load average %s at the start", sizes, load),
		"10,000 records are answered in the request (total = the POST); more become a job (total = POST → 202 → GET /v1/bulk/jobs/{id} every 100 ms until succeeded): the request stores the records in bulk_job_chunks (one row per 10,000), the outbox relay starts the workflow, the worker's activity imports 10,000 rows per transaction; the relay expands each committed chunk's events meanwhile (nothing subscribes to them: written published); every sample ends when the relay has handled every event of the import (checked every 20 ms), so that each scale counts the same work per record; "+autovacuumNote(e.admin != nil),
		"without the relay's work after the import answered or succeeded (the one-request import's whole expansion, a job's last chunk's), median per record: "+strings.Join(answeredNotes, "; "),
		walNote(walNotes),
	)
	e.report.Scaling = append(e.report.Scaling, tab)
	return nil
}

// scalingCSV is a CSV body of records new actuals for benefits created for
// it: bulkRecords' 10,000 rows for each 40 benefits, each 40 in their own
// initiative.
func (e *env) scalingCSV(ctx context.Context, t benchutil.Tenant, records, sample int) ([]byte, error) {
	var body bytes.Buffer
	body.Grow(records * 70)
	body.WriteString("benefit_id,period,value,notes\n")
	for g := range records / bulkRows {
		var initID uuid.UUID
		if err := db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `INSERT INTO initiatives (tenant_id, name) VALUES ($1, $2) RETURNING id`, t.ID, fmt.Sprintf("Scaling %d.%d", sample, g)).Scan(&initID)
		}); err != nil {
			return nil, err
		}
		benefits, err := e.bulkBenefits(ctx, t, initID, g, "scaling")
		if err != nil {
			return nil, err
		}
		for _, r := range bulkRecords(benefits) {
			fmt.Fprintf(&body, "%s,%s,%s,%s\n", r["benefit_id"], r["period"], strconv.FormatFloat(r["value"].(float64), 'f', -1, 64), r["notes"])
		}
	}
	return body.Bytes(), nil
}

// importCSV posts one import and, when it became a job, follows the job to
// its end; every record must be created. It returns the time to the end.
func (e *env) importCSV(ctx context.Context, client *http.Client, t benchutil.Tenant, body []byte, records int) (time.Duration, error) {
	req, err := e.request(ctx, http.MethodPost, "/v1/bulk/import?resource=actuals&mode=create", t, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "text/csv")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	_ = resp.Body.Close()
	type outcome struct {
		ID        string  `json:"id"`
		Status    string  `json:"status"`
		Committed *bool   `json:"committed"`
		Error     *string `json:"error"`
		Summary   struct {
			Created int `json:"created"`
			Failed  int `json:"failed"`
		} `json:"summary"`
	}
	var got outcome
	if err := json.Unmarshal(data, &got); err != nil {
		return 0, fmt.Errorf("%s: %.300s", resp.Status, data)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusAccepted:
		deadline := start.Add(max(2*time.Minute, time.Duration(records)*4*time.Millisecond))
		for got.Status != "succeeded" && got.Status != "failed" {
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("job %s still %s after %s (is the worker running?)", got.ID, got.Status, time.Since(start).Round(time.Second))
			}
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			b, status, err := e.getBody(ctx, t, "/v1/bulk/jobs/"+got.ID)
			if err != nil {
				return 0, err
			}
			if status != http.StatusOK || json.Unmarshal(b, &got) != nil {
				return 0, fmt.Errorf("GET /v1/bulk/jobs/%s: %d %.300s", got.ID, status, b)
			}
		}
	default:
		return 0, fmt.Errorf("%s: %.300s", resp.Status, data)
	}
	took := time.Since(start)
	if got.Committed == nil || !*got.Committed || got.Summary.Created != records {
		return 0, fmt.Errorf("%d records: status %q, committed %v, created %d, failed %d, error %q", records, got.Status, got.Committed, got.Summary.Created, got.Summary.Failed, deref(got.Error))
	}
	return took, nil
}

// publishTenantEvents marks a tenant's pending events published without
// relaying them, until none is left: for a suite whose events no worker relays
// (bulk) or whose receiver refuses for good (fairness), so that the workers of
// the suites after it do not handle them inside their own measurements. An
// expansion of a batch row under way when the UPDATE runs writes its events
// after it, hence the loop.
func (e *env) publishTenantEvents(ctx context.Context, tenantID uuid.UUID) error {
	for quiet := 0; quiet < 3; {
		n, err := e.updatePendingEvents(ctx, tenantID, "published_at = now()")
		if err != nil {
			return err
		}
		if quiet++; n > 0 {
			quiet = 0
		}
		time.Sleep(500 * time.Millisecond)
	}
	return nil
}

// scaleSamples gathers one scale's samples of an import or a sync: each
// sample's time, its work's own time (answered) and the WAL written meanwhile.
type scaleSamples struct {
	took, answered []time.Duration
	wal            walUse
}

// measure runs one sample of the tenant's work: once autovacuum is idle, from
// run's start until the relay has handled the tenant's events, so that every
// scale counts the same work per record. run returns its own time, without the
// relay's work after it. A sample that fails is not kept.
func (s *scaleSamples) measure(ctx context.Context, e *env, tenantID uuid.UUID, run func() (time.Duration, error)) (took, answered time.Duration, err error) {
	if err := e.awaitAutovacuum(ctx); err != nil {
		return 0, 0, err
	}
	before, err := e.walNow(ctx)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if answered, err = run(); err != nil {
		return 0, 0, err
	}
	if err := e.awaitTenantEvents(ctx, tenantID); err != nil {
		return 0, 0, err
	}
	took = time.Since(start)
	after, err := e.walNow(ctx)
	if err != nil {
		return 0, 0, err
	}
	s.took, s.answered, s.wal = append(s.took, took), append(s.answered, answered), s.wal.add(after.sub(before))
	return took, answered, nil
}

// pendingEvents counts the tenant's events not yet published.
func (e *env) pendingEvents(ctx context.Context, tenantID uuid.UUID) (int, error) {
	var n int
	err := db.InSystem(ctx, e.pool, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT count(*) FROM outbox_events WHERE tenant_id = $1 AND published_at IS NULL", tenantID).Scan(&n)
	})
	return n, err
}

// awaitTenantEvents waits until the relay has handled every event of the
// tenant (its imported actuals' events, which nothing subscribes to, are
// written published when the relay expands their batch). A sample ends there,
// so that every scale counts the same work per record: the relay expands a
// job's chunks while the later ones import, and a one-request import's single
// batch after its answer.
func (e *env) awaitTenantEvents(ctx context.Context, tenantID uuid.UUID) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		pending, err := e.pendingEvents(ctx, tenantID)
		if err != nil {
			return err
		}
		if pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tenant %s: %d events still pending after 5 minutes", tenantID, pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitAutovacuum waits, before a sample, until no autovacuum worker runs on
// the server (at most 3 minutes): the vacuums and analyzes that one sample's
// rows set off are that sample's cost, not the next one's (after the
// 500,000-record import, autovacuum works through its gigabyte of tables
// during the syncs that follow). Only a superuser sees those workers
// (BENCH_COPY_DATABASE_URL, which make bench sets); without one it does not
// wait.
func (e *env) awaitAutovacuum(ctx context.Context) error {
	if e.admin == nil {
		return nil
	}
	start := time.Now()
	for {
		var running int
		if err := e.admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`).Scan(&running); err != nil {
			return err
		}
		if running == 0 || time.Since(start) > 3*time.Minute {
			if waited := time.Since(start); waited > time.Second {
				logf("scaling: waited %s for autovacuum to finish before the sample (%d workers still running)", waited.Round(time.Second), running)
			}
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func autovacuumNote(waits bool) string {
	if !waits {
		return "no superuser (BENCH_COPY_DATABASE_URL), so a sample may share the machine with the autovacuum of the one before"
	}
	return "before each sample the suite waits until no autovacuum worker runs (at most 3 minutes), so no sample pays for the vacuum of the one before"
}

// walUse is what the server's write-ahead log recorded over a stretch of time
// (pg_stat_wal, pg_stat_bgwriter: the whole server, so an idle machine's).
type walUse struct{ bytes, fpi, checkpoints float64 }

func (e *env) walNow(ctx context.Context) (walUse, error) {
	var w walUse
	err := e.pool.QueryRow(ctx, `SELECT w.wal_bytes::float8, w.wal_fpi::float8, (b.checkpoints_timed + b.checkpoints_req)::float8
		FROM pg_stat_wal w, pg_stat_bgwriter b`).Scan(&w.bytes, &w.fpi, &w.checkpoints)
	return w, err
}

func (w walUse) sub(o walUse) walUse {
	return walUse{w.bytes - o.bytes, w.fpi - o.fpi, w.checkpoints - o.checkpoints}
}

func (w walUse) add(o walUse) walUse {
	return walUse{w.bytes + o.bytes, w.fpi + o.fpi, w.checkpoints + o.checkpoints}
}

// per is one scale's WAL per record over its samples (records in all).
func (w walUse) per(scale string, records int) string {
	n := float64(max(records, 1))
	return fmt.Sprintf("%s %.2f kB/record (full-page images %.0f%% of records), %.0f checkpoints", scale, w.bytes/n/1000, 100*w.fpi/n, w.checkpoints)
}

// perRecord is one scale's median of samples per record, in µs.
func perRecord(scale string, records int, samples []time.Duration) string {
	return fmt.Sprintf("%s %.0f µs", scale, float64(benchutil.Median(samples))/float64(records)/float64(time.Microsecond))
}

func walNote(scales []string) string {
	return "WAL over the samples (pg_stat_wal; checkpoints: pg_stat_bgwriter; the whole server): " + strings.Join(scales, "; ")
}

// updatePendingEvents applies set (an SQL assignment list) to the tenant's
// pending events and returns how many it changed. They are locked in seq
// order, as the relay's OutboxPublish locks the events it publishes
// meanwhile: in any other order the two deadlock.
func (e *env) updatePendingEvents(ctx context.Context, tenantID uuid.UUID, set string) (int64, error) {
	var n int64
	err := db.InSystem(ctx, e.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE outbox_events SET `+set+`
			WHERE seq IN (SELECT seq FROM outbox_events WHERE tenant_id = $1 AND published_at IS NULL ORDER BY seq FOR UPDATE)`, tenantID)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// scaleSync syncs 10,000 and 100,000 records of the fake http_feed, each
// sync on a fresh tenant with the benefits the feed names.
func (e *env) scaleSync(ctx context.Context) error {
	load := benchutil.LoadAvg()
	tab := benchutil.Scaling{Name: "http_feed sync (fresh)", Unit: "record", PerUnitIn: "µs"}
	var walNotes, succeededNotes []string
	for _, sc := range syncScales {
		feed := providertest.NewFeed(nil, providertest.Options{Records: sc.records, PageSize: syncPageSize})
		var samples scaleSamples
		for n := range sc.samples {
			t, err := e.syncTenant(ctx, n, "scaling", sc.records)
			if err != nil {
				feed.Close()
				return err
			}
			var in struct {
				ID string `json:"id"`
			}
			if err := e.post(ctx, t, "/v1/integrations", map[string]any{"provider": "http_feed", "name": "Finance feed (bench)",
				"config": map[string]any{"instance_url": feed.URL, "oauth_token": feed.Token()}}, &in); err != nil {
				feed.Close()
				return err
			}
			d, synced, err := samples.measure(ctx, e, t.ID, func() (time.Duration, error) {
				start := time.Now()
				st, err := e.syncOnce(ctx, t, in.ID, max(2*time.Minute, time.Duration(sc.records)*20*time.Millisecond))
				if err == nil && (st.Status != "succeeded" || st.Counts["created"] != sc.records) {
					err = fmt.Errorf("sync %s, counts %v; want %d created", st.Status, st.Counts, sc.records)
				}
				return time.Since(start), err
			})
			if err != nil {
				e.fail("scaling sync "+sc.scale, fmt.Sprintf("sample %d", n+1), err.Error())
				continue
			}
			logf("scaling: sync of %d records, sample %d: %s (succeeded after %s)", sc.records, n+1, d.Round(time.Millisecond), synced.Round(time.Millisecond))
		}
		feed.Close()
		if len(samples.took) > 0 {
			tab.Add(sc.scale, sc.records, samples.took)
			walNotes = append(walNotes, samples.wal.per(sc.scale, sc.records*len(samples.took)))
			succeededNotes = append(succeededNotes, perRecord(sc.scale, sc.records, samples.answered))
		}
	}
	tab.Notes = append(tab.Notes, fmt.Sprintf("each sample: a fresh tenant with the benefits the feed names (one per 12 records), the integration created through the API, then POST /v1/integrations/{id}/sync → the status URL says succeeded with every record created (polled every 25 ms), as the sync suite, and the relay has handled the sync's events (checked every 20 ms); pages of %d from the fake feed in the benchmark process; %s; load average %s at the start", syncPageSize, autovacuumNote(e.admin != nil), load),
		"without the relay's work after the sync succeeded (its last page's events), median per record: "+strings.Join(succeededNotes, "; "),
		walNote(walNotes))
	e.report.Scaling = append(e.report.Scaling, tab)
	return nil
}

// touchAnalyticsInput writes to one of t's initiatives without changing it,
// which moves t's data version: its next analytics reads compute afresh.
func (e *env) touchAnalyticsInput(ctx context.Context, t benchutil.Tenant) error {
	return db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE initiatives SET updated_at = updated_at
			WHERE tenant_id = $1 AND id = (SELECT id FROM initiatives WHERE tenant_id = $1 ORDER BY id LIMIT 1)`, t.ID)
		return err
	})
}
