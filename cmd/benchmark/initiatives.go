package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/analytics"
	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/rbac"
)

// initiativeCreates is the number of initiatives each side creates per
// round on a fresh tenant (warm-up included), rounded down to a multiple of
// the client count. The live-initiative cap of a tenant is 1,000.
var initiativeCreates int

var initiativesSuite = suite{
	name: "initiatives",
	help: "POST /v1/initiatives (fixed count) and GET /v1/initiatives (duration) against pgbench on the same SQL",
	flags: func(fs *flag.FlagSet) {
		fs.IntVar(&initiativeCreates, "creates", envInt("BENCH_CREATES", 950), "initiatives: creates per side and round, warm-up included (a tenant holds at most 1000) [BENCH_CREATES]")
	},
	run: runInitiatives,
}

// The request path of each run runs these sqlc queries in one transaction
// (api/middleware.go tenantTx, then the handler in api/initiatives.go); the
// pgbench scripts below run the same queries in the same order.
var (
	// tenantTx: BEGIN; set the tenant; the caller's one query (expectCaller: user, session, role permissions).
	txPrologue = []string{"UserAuthenticate"}
	// The prologue's parameters that are not pgbench variables: bench tokens carry no
	// session (benchutil.Null) and the role Admin (a literal: pgbench has no array variables).
	prologueBinds = map[string]string{"session_id": benchutil.Null, "token_roles": "'{Admin}'"}
	// createInitiative, after the prologue.
	createQueries = []string{"InitiativeLockTenantCreates", "InitiativeCountLive", "BulkInitiativesInsert", "BulkInitiativesHistoryAdd", "OutboxInsert"}
	// listInitiatives, after the prologue (page 1: the window count gives the total).
	listQueries = []string{"InitiativeList"}
	// querySettings are the settings the API sends with a query (db.WithSettings): the
	// pgbench scripts send the same statements, and the baselines' names show them. Every
	// analytics run of the bench reads the portfolio.
	querySettings = map[string]db.Settings{
		"InitiativeList":           db.PlanPerCall,
		"AnalyticsRealizationSums": analytics.PortfolioPlan,
	}
)

const (
	benchSubject      = "bench-user"
	benchDescription  = "benchmark initiative"
	listPageSize      = 50
	initiativeNameMin = 100_000_000_000 // names are 12-digit numbers on both sides
	initiativeNameMax = 999_999_999_999
)

func runInitiatives(ctx context.Context, e *env) error {
	c := e.concurrency
	perClient := initiativeCreates / c // requests or transactions per client and round, warm-up included
	if perClient <= e.warmup {
		return fmt.Errorf("--creates %d over %d clients leaves nothing to measure after %d warm-up requests each", initiativeCreates, c, e.warmup)
	}
	if perClient*c > 1000 {
		return fmt.Errorf("--creates %d exceeds the tenant cap of 1000 live initiatives", perClient*c)
	}
	creates := perClient * c
	roles := []string{rbac.RoleAdmin}
	perms := []string{string(rbac.InitiativesRead), string(rbac.InitiativesWrite)}
	newTenant := func(side string, round int) (benchutil.Tenant, error) {
		name := fmt.Sprintf("bench initiatives %s round %d %s", side, round+1, time.Now().UTC().Format(time.RFC3339Nano))
		return benchutil.NewTenant(ctx, e.pool, e.keys, name, benchSubject, roles, perms)
	}

	// --- POST /v1/initiatives: a fixed count per round, each side on a fresh tenant ---
	const postRun = "POST /v1/initiatives"
	var listTenant benchutil.Tenant // the API tenant of round 1, read by both sides of the GET run
	pool := e.poolTracker()
	postAPI := func(ctx context.Context, r int) ([]benchutil.Sample, int, error) {
		t, err := newTenant("API", r)
		if err != nil {
			return nil, 0, err
		}
		if r == 0 {
			listTenant = t
		}
		logf("%s round %d: API, %d creates (%d clients x %d, first %d each warm-up), tenant %s", postRun, r+1, creates, c, perClient, e.warmup, t.ID)
		pool.start(ctx)
		res, err := benchutil.HTTPLoad{
			BaseURL: e.apiURL, Workers: c, Warmup: e.warmup, PerWorker: perClient - e.warmup,
			NewRequest: func(n int, req *fasthttp.Request) error {
				body, _ := json.Marshal(map[string]string{"name": strconv.Itoa(initiativeNameMin + n), "description": benchDescription})
				setRequest(req, http.MethodPost, "/v1/initiatives", t, body)
				return nil
			},
		}.Run(ctx)
		if err != nil {
			return nil, 0, err
		}
		pool.stop(ctx)
		if res.Errors > 0 {
			e.fail(postRun, fmt.Sprintf("API round %d", r+1), res.ErrorText())
		}
		if err := e.checkCreated(ctx, t, creates); err != nil {
			e.fail(postRun, fmt.Sprintf("API round %d check", r+1), err.Error())
		}
		return res.Samples, res.Errors, nil
	}
	postBase := func(ctx context.Context, r int) ([]benchutil.Sample, int, error) {
		t, err := newTenant("pgbench", r)
		if err != nil {
			return nil, 0, err
		}
		script, vars, err := e.createScript(t)
		if err != nil {
			return nil, 0, err
		}
		logf("%s round %d: pgbench %s, %d transactions, tenant %s", postRun, r+1, script, creates, t.ID)
		res, err := e.pgbench("initiatives-create", script, vars, perClient, 0).Run(ctx)
		if err != nil {
			return nil, 0, err
		}
		if err := e.checkCreated(ctx, t, creates); err != nil {
			e.fail(postRun, fmt.Sprintf("pgbench round %d check", r+1), err.Error())
		}
		return res.Samples, res.Errors, nil
	}
	post, err := benchutil.Alternate(ctx, e.rounds, postAPI, postBase)
	if err != nil {
		return fmt.Errorf("%s: %w", postRun, err)
	}
	e.report.Runs = append(e.report.Runs, benchutil.NewComparison(postRun,
		"pgbench {BEGIN; set tenant; "+strings.Replace(joinNames(txPrologue, createQueries), "InitiativeCreate", "InitiativeCreate (RETURNING * \\gset)", 1)+"; COMMIT}",
		c, post,
		fmt.Sprintf("fixed count: in each round each side creates %d initiatives on a fresh tenant of its own (a tenant holds at most 1,000 live initiatives)", creates),
		"creates of one tenant are serialised by the advisory lock of InitiativeLockTenantCreates, on both sides (the real behaviour): one create commits at a time and the other clients' time goes into waiting for the lock",
		"pgbench sends NULL for the optional fields (industry, segment, dates, from_status) as benchutil.Null, NULLIF of a parameter (pgbench cannot send a NULL parameter, and a literal NULL would be planned away), and a representative initiative.created JSON of the same shape as the API's as the outbox data; names are random 12-digit numbers (API: sequential ones)",
		pool.note(),
	))

	// --- GET /v1/initiatives: duration-based, both sides read the same tenant ---
	const getRun = "GET /v1/initiatives"
	listPath := fmt.Sprintf("/v1/initiatives?page=1&page_size=%d", listPageSize)
	// Statistics of the creates first, as autovacuum takes them within its next round: else the
	// side that goes first reads the tenant under statistics from before it existed.
	if _, err := e.pool.Exec(ctx, "ANALYZE initiatives"); err != nil {
		return err
	}
	if err := e.checkList(ctx, listPath, listTenant, creates); err != nil {
		e.fail(getRun, "check", err.Error())
	}
	listScript, listVars, err := e.listScript(listTenant)
	if err != nil {
		return err
	}
	pool = e.poolTracker()
	get, err := e.compareGET(ctx, getRun, fmt.Sprintf(", page 1 of %d initiatives", creates), listPath, listTenant, c, pool, "initiatives-list", listScript, listVars)
	if err != nil {
		return err
	}
	slice := e.durationSlice()
	e.report.Runs = append(e.report.Runs, benchutil.NewComparison(getRun,
		"pgbench {BEGIN; set tenant; "+joinNames(txPrologue, listQueries)+"; COMMIT}",
		c, get,
		fmt.Sprintf("duration-based: %s per side and round; both sides read page 1 (page_size %d, sort created_at desc) of the same tenant's %d initiatives, with statistics taken after the creates (ANALYZE before the run)", slice, listPageSize, creates),
		"no status or industry filter: the API sends NULL parameters, pgbench benchutil.Null (NULLIF of a parameter: NULL when run, unknown when planned, as a NULL parameter; a literal NULL would let PostgreSQL fold the filters away for pgbench only); both sides plan the list for its parameters on every call (db.PlanPerCall: plan_cache_mode set just before the list, the API in its implicit transaction, one statement more, pgbench the same statement in its transaction); a connection left to the plan cache could keep a generic plan that sorts every row of the tenant: pgbench's connections did in some runs (940 tx/s against 1,650 planning per call), which made the baseline, not the API, the slow side",
		pool.note(),
	))
	return nil
}

// durationSlice is the measured time per side and round (pgbench -T takes whole seconds).
func (e *env) durationSlice() time.Duration {
	return time.Duration(max(1, int(math.Round(e.duration.Seconds()/float64(e.rounds))))) * time.Second
}

// compareGET is a duration-based run: c clients GET path as t through the
// API against pgbench running script (the same SQL), alternating which side
// goes first each round. what names the API side in the progress lines.
func (e *env) compareGET(ctx context.Context, run, what, path string, t benchutil.Tenant, c int, pool *poolTracker,
	name, script string, vars map[string]string) (benchutil.Compared, error) {
	slice := e.durationSlice()
	api := func(ctx context.Context, r int) ([]benchutil.Sample, int, error) {
		logf("%s round %d: API, %s, %d clients%s", run, r+1, slice, c, what)
		pool.start(ctx)
		res, err := benchutil.HTTPLoad{
			BaseURL: e.apiURL, Workers: c, Warmup: e.warmup, Duration: slice,
			NewRequest: func(_ int, req *fasthttp.Request) error {
				setRequest(req, http.MethodGet, path, t, nil)
				return nil
			},
		}.Run(ctx)
		if err != nil {
			return nil, 0, err
		}
		pool.stop(ctx)
		if res.Errors > 0 {
			e.fail(run, fmt.Sprintf("API round %d", r+1), res.ErrorText())
		}
		return res.Samples, res.Errors, nil
	}
	base := func(ctx context.Context, r int) ([]benchutil.Sample, int, error) {
		logf("%s round %d: pgbench %s, %s", run, r+1, script, slice)
		res, err := e.pgbench(name, script, vars, 0, slice).Run(ctx)
		if err != nil {
			return nil, 0, err
		}
		return res.Samples, res.Errors, nil
	}
	got, err := benchutil.Alternate(ctx, e.rounds, api, base)
	if err != nil {
		return got, fmt.Errorf("%s: %w", run, err)
	}
	return got, nil
}

// tenantHeaders are the headers of an authenticated tenant request, with a
// body's Content-Type when it has one.
func tenantHeaders(t benchutil.Tenant, hasBody bool) [][2]string {
	h := [][2]string{{"Authorization", "Bearer " + t.Token}, {"X-Tenant-ID", t.ID.String()}}
	if hasBody {
		h = append(h, [2]string{"Content-Type", "application/json"})
	}
	return h
}

// request builds an authenticated tenant request (single calls; the load
// runs set theirs with setRequest).
func (e *env) request(ctx context.Context, method, path string, t benchutil.Tenant, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.apiURL+path, r)
	if err != nil {
		return nil, err
	}
	for _, h := range tenantHeaders(t, body != nil) {
		req.Header.Set(h[0], h[1])
	}
	return req, nil
}

// setRequest sets req to what request builds, for an HTTPLoad.
func setRequest(req *fasthttp.Request, method, path string, t benchutil.Tenant, body []byte) {
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	for _, h := range tenantHeaders(t, body != nil) {
		req.Header.Set(h[0], h[1])
	}
	req.SetBody(body)
}

// pgbench is a run with the suite's settings; its script and logs go to the work directory.
func (e *env) pgbench(name, script string, vars map[string]string, perClient int, d time.Duration) benchutil.PGBench {
	return benchutil.PGBench{
		Path: e.pgbenchPath, ConnURL: e.databaseURL, Script: script, Clients: e.concurrency, Threads: 2,
		Warmup: e.warmup, Transactions: perClient, Duration: d, Vars: vars,
		LogPrefix: filepath.Join(e.workDir, "pgbench-logs", name),
	}
}

// prologue starts a script the way tenantTx starts a request.
func (e *env) prologue(s *benchutil.Script) error {
	s.SQL("BEGIN")
	s.SQL(benchutil.Positional(db.SetTenantSQL, "tenant_id"))
	for _, name := range txPrologue {
		sql, err := e.queries.Get(name)
		if err != nil {
			return err
		}
		s.SQL(benchutil.Bind(sql, prologueBinds))
	}
	return nil
}

// createScript is createInitiative's transaction as a pgbench script.
func (e *env) createScript(t benchutil.Tenant) (string, map[string]string, error) {
	s := benchutil.NewScript("tenant_id", "subject", "description", "reason", "event_type", "event_data")
	s.Meta(fmt.Sprintf(`\set name random(%d, %d)`, initiativeNameMin, initiativeNameMax))
	if err := e.prologue(s); err != nil {
		return "", nil, err
	}
	// Bindings of the parameters whose pgbench variable is not their own name.
	binds := map[string]map[string]string{
		// initiative.Create writes a batch of one: its arrays hold one element ('' is none).
		"BulkInitiativesInsert": {"source": "''", "names": "ARRAY[:name::text]", "descriptions": "ARRAY[:description::text]",
			"industries": "ARRAY['']", "segments": "ARRAY['']", "owner_ids": "ARRAY[:subject::text]",
			"start_dates": "ARRAY['']", "end_dates": "ARRAY['']", "external_ids": "ARRAY['']"},
		"BulkInitiativesHistoryAdd": {"initiative_ids": "ARRAY[:ins_id::uuid]", "kinds": "ARRAY['status']",
			"from_statuses": "ARRAY['']", "to_statuses": "ARRAY[:ins_status::text]", "from_owners": "ARRAY['']",
			"to_owners": "ARRAY['']", "reasons": "ARRAY[:reason::text]", "actor": ":subject"},
		"OutboxInsert": {"type": ":event_type", "data": ":event_data"},
	}
	for _, name := range createQueries {
		sql, err := e.queries.Get(name)
		if err != nil {
			return "", nil, err
		}
		sql = benchutil.Bind(sql, binds[name])
		if name == "BulkInitiativesInsert" {
			s.SQLGset(sql, "ins_") // RETURNING *: the new id and status for the next statements
		} else {
			s.SQL(sql)
		}
	}
	s.SQL("COMMIT")
	path := filepath.Join(e.workDir, "initiatives-create.pgbench")
	if err := s.Write(path); err != nil {
		return "", nil, err
	}
	// The outbox data: the initiative as the API renders it (same fields and size).
	now := time.Now().UTC().Format(time.RFC3339Nano)
	data, _ := json.Marshal(initiative.View{ID: uuid.NewString(), Name: strconv.Itoa(initiativeNameMin), Description: benchDescription,
		Status: "draft", OwnerID: &t.Subject, CreatedAt: now, UpdatedAt: now})
	return path, map[string]string{
		"tenant_id": t.ID.String(), "subject": t.Subject, "description": benchDescription, "reason": "created",
		"event_type": "initiative.created", "event_data": string(data),
	}, nil
}

// listScript is listInitiatives' transaction (page 1, default sort) as a pgbench script.
func (e *env) listScript(t benchutil.Tenant) (string, map[string]string, error) {
	s := benchutil.NewScript("tenant_id", "subject", "sort", "sort_desc", "page_limit", "page_offset")
	if err := e.prologue(s); err != nil {
		return "", nil, err
	}
	for _, name := range listQueries {
		sql, err := e.queries.Get(name)
		if err != nil {
			return "", nil, err
		}
		// The API's read runs the list in an implicit transaction, the setting just before it.
		if settings, ok := querySettings[name]; ok {
			s.SQL(settings.Local)
		}
		s.SQL(benchutil.Bind(sql, map[string]string{"status": benchutil.Null, "industry": benchutil.Null}))
	}
	s.SQL("COMMIT")
	path := filepath.Join(e.workDir, "initiatives-list.pgbench")
	if err := s.Write(path); err != nil {
		return "", nil, err
	}
	return path, map[string]string{
		"tenant_id": t.ID.String(), "subject": t.Subject, "sort": "created_at", "sort_desc": "true",
		"page_limit": strconv.Itoa(listPageSize), "page_offset": "0",
	}, nil
}

// checkCreated verifies that a create run wrote what the service writes:
// the initiatives, one status-history row and one outbox event each.
func (e *env) checkCreated(ctx context.Context, t benchutil.Tenant, want int) error {
	var initiatives, history, events int
	err := db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM initiatives WHERE status = 'draft'),
			(SELECT count(*) FROM initiative_status_history WHERE reason = 'created' AND to_status = 'draft'),
			(SELECT count(*) FROM outbox_events WHERE type = 'initiative.created')`).Scan(&initiatives, &history, &events)
	})
	if err != nil {
		return err
	}
	if initiatives != want || history != want || events != want {
		return fmt.Errorf("tenant %s holds %d initiatives, %d history rows, %d outbox events; want %d of each", t.ID, initiatives, history, events, want)
	}
	return nil
}

// checkList verifies that the API answers the listed page as the baseline computes it.
func (e *env) checkList(ctx context.Context, path string, t benchutil.Tenant, total int) error {
	req, err := e.request(ctx, http.MethodGet, path, t, nil)
	if err != nil {
		return err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var page struct {
		Data []json.RawMessage `json:"data"`
		Meta struct {
			Pagination struct {
				Total int `json:"total"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return fmt.Errorf("GET %s: %s %s", path, resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if len(page.Data) != min(listPageSize, total) || page.Meta.Pagination.Total != total {
		return fmt.Errorf("GET %s: %d items of total %d, want %d of %d", path, len(page.Data), page.Meta.Pagination.Total, min(listPageSize, total), total)
	}
	return nil
}

// joinNames names a baseline's queries in order, each with the settings it runs with.
func joinNames(lists ...[]string) string {
	var out string
	for _, l := range lists {
		for _, n := range l {
			if out != "" {
				out += "; "
			}
			out += n
			if settings, ok := querySettings[n]; ok {
				out += " (with " + settingsText(settings.Each) + ")"
			}
		}
	}
	return out
}

// settingsText names settings as a baseline shows them: "enable_nestloop = off".
func settingsText(settings []db.Setting) string {
	parts := make([]string, len(settings))
	for i, s := range settings {
		parts[i] = s.Name + " = " + s.Value
	}
	return strings.Join(parts, ", ")
}
