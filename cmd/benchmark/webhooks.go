package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/outbox"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/secretbox"
	"github.com/valuecase/valuecase/internal/webhook"
)

var (
	webhookEvents    int
	webhookSubs      int
	webhookValuecase string
	// workerGOMEMLIMIT is the GOMEMLIMIT of every worker the suites start ("off": none).
	workerGOMEMLIMIT string
)

var webhooksSuite = suite{
	name: "webhooks",
	help: "events committed through POST /v1/initiatives, delivered by a real worker to a local receiver: deliveries/s, commit-to-receipt p50/p99, lost/duplicate ids; against direct signed POSTs to the same receiver",
	flags: func(fs *flag.FlagSet) {
		fs.IntVar(&webhookEvents, "webhook-events", envInt("BENCH_WEBHOOK_EVENTS", 3000), "webhooks: events committed through the API per round [BENCH_WEBHOOK_EVENTS]")
		fs.IntVar(&webhookSubs, "webhook-subscriptions", envInt("BENCH_WEBHOOK_SUBSCRIPTIONS", 2), "webhooks: subscriptions per tenant, each a delivery of every event [BENCH_WEBHOOK_SUBSCRIPTIONS]")
		fs.StringVar(&webhookValuecase, "valuecase", envOr("BENCH_VALUECASE", "bin/valuecase"), "webhooks: the binary whose `worker` the suite starts [BENCH_VALUECASE]")
		fs.StringVar(&workerGOMEMLIMIT, "worker-gomemlimit", envOr("BENCH_WORKER_GOMEMLIMIT", "140MiB"), "the GOMEMLIMIT of the workers the suites start, as the API's (off: none) [BENCH_WORKER_GOMEMLIMIT]")
	},
	run: runWebhooks,
}

const (
	benchHookSecret = "bench-webhook-secret-0123456789"
	maxPerTenant    = 950 // below the 1,000 live initiatives of a tenant
)

// hookReceiver is the local receiver: it verifies each signature and records
// when each (subscription, event) arrived.
type hookReceiver struct {
	srv     *http.Server
	url     string
	mu      sync.Mutex
	arrived map[string]time.Time // "<subscription path> <event id>" → first arrival
	dups    int
	bad     int
	total   int
}

func newHookReceiver() (*hookReceiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &hookReceiver{url: "http://" + l.Addr().String(), arrived: map[string]time.Time{}}
	rc.srv = &http.Server{Handler: http.HandlerFunc(rc.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = rc.srv.Serve(l) }()
	return rc, nil
}

func (rc *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	at := time.Now()
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	ok := webhook.Verify(benchHookSecret, body, r.Header.Get(webhook.HeaderSignature))
	key := r.URL.Path + " " + r.Header.Get(webhook.HeaderEventID)
	rc.mu.Lock()
	rc.total++
	if !ok {
		rc.bad++
	}
	if _, seen := rc.arrived[key]; seen {
		rc.dups++
	} else {
		rc.arrived[key] = at
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rc *hookReceiver) reset() {
	rc.mu.Lock()
	rc.arrived, rc.dups, rc.bad, rc.total = map[string]time.Time{}, 0, 0, 0
	rc.mu.Unlock()
}

func (rc *hookReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.arrived)
}

func runWebhooks(ctx context.Context, e *env) error {
	const run = "webhook deliveries"
	if webhookEvents < e.concurrency || webhookSubs < 1 || webhookSubs > 20 {
		return fmt.Errorf("want --webhook-events >= --concurrency and 1 <= --webhook-subscriptions <= 20")
	}
	rc, err := newHookReceiver()
	if err != nil {
		return err
	}
	defer rc.srv.Close()
	box, err := secretbox.New(os.Getenv("SECRETS_KEY")) // the worker below gets the same environment
	if err != nil {
		return err
	}
	stopWorker, workerPID, err := e.startWorker(ctx, "webhook deliveries", "")
	if err != nil {
		return err
	}
	api := apiPID()
	defer func() { stopWorker() }() // the drain below starts another
	if err := e.waitOutboxDrained(ctx, 2*time.Minute); err != nil {
		return err
	}

	// Each HTTP worker creates on a tenant of its own: creates of one tenant are serialised.
	perWorker := webhookEvents / e.concurrency
	events := perWorker * e.concurrency
	tenantsPerWorker := (perWorker + maxPerTenant - 1) / maxPerTenant
	deliveriesPerRound := events * webhookSubs
	var lost, dups, bad int
	var commitRates []float64
	var cpu cpuUse // API rounds, from the first create to the last arrival
	cpuEvents := 0

	// commitEvents creates `events` initiatives through the API, each client on tenants of its
	// own; it returns the tenants and when each create's 201 arrived (initiative id → time).
	commitEvents := func(ctx context.Context, r int) ([][]benchutil.Tenant, map[string]time.Time, int, error) {
		tenants := make([][]benchutil.Tenant, e.concurrency)
		for w := range tenants {
			for range tenantsPerWorker {
				t, err := e.webhookTenant(ctx, box, rc.url, r)
				if err != nil {
					return nil, nil, 0, err
				}
				tenants[w] = append(tenants[w], t)
			}
		}
		logf("%s round %d: API, %d events (%d clients x %d, each on its own tenant) x %d subscriptions", run, r+1, events, e.concurrency, perWorker, webhookSubs)
		committed := make(map[string]time.Time, events) // initiative id → 201 received
		var mu sync.Mutex
		var wg sync.WaitGroup
		var failures int
		for w := range e.concurrency {
			wg.Go(func() {
				for i := range perWorker {
					t := tenants[w][i/maxPerTenant]
					body, _ := json.Marshal(map[string]string{"name": fmt.Sprintf("wh-%d-%d-%d", r, w, i)})
					req, err := e.request(ctx, http.MethodPost, "/v1/initiatives", t, body)
					if err != nil {
						mu.Lock()
						failures++
						mu.Unlock()
						continue
					}
					resp, err := e.client.Do(req)
					at := time.Now()
					if err != nil {
						mu.Lock()
						failures++
						mu.Unlock()
						continue
					}
					var created struct{ ID string }
					_ = json.NewDecoder(resp.Body).Decode(&created)
					_ = resp.Body.Close()
					mu.Lock()
					if resp.StatusCode != http.StatusCreated {
						failures++
					} else {
						committed[created.ID] = at
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return tenants, committed, failures, nil
	}

	apiSide := func(ctx context.Context, r int) ([]benchutil.Sample, int, error) {
		rc.reset()
		cpuStart := e.sampleCPU(ctx, api, workerPID)
		tenants, committed, failures, err := commitEvents(ctx, r)
		if err != nil {
			return nil, 0, err
		}
		if failures > 0 {
			e.fail(run, fmt.Sprintf("API round %d", r+1), fmt.Sprintf("%d creates failed", failures))
		}
		var firstCommit, lastCommit time.Time
		for _, at := range committed {
			if firstCommit.IsZero() || at.Before(firstCommit) {
				firstCommit = at
			}
			if at.After(lastCommit) {
				lastCommit = at
			}
		}
		// Wait for every delivery (or a quiet minute).
		deadline := time.Now().Add(time.Minute)
		for last := -1; rc.count() < len(committed)*webhookSubs && time.Now().Before(deadline); {
			if n := rc.count(); n != last {
				last, deadline = n, time.Now().Add(time.Minute)
			}
			time.Sleep(20 * time.Millisecond)
		}
		cpu.add(e.sampleCPU(ctx, api, workerPID).since(cpuStart))
		cpuEvents += len(committed)
		time.Sleep(200 * time.Millisecond) // late duplicates would show now
		samples, missing, err := e.deliverySamples(ctx, rc, tenants, committed)
		if err != nil {
			return nil, 0, err
		}
		lastArrival := lastCommit
		for _, s := range samples {
			if s.End.After(lastArrival) {
				lastArrival = s.End
			}
		}
		commitRate := float64(len(committed)) / lastCommit.Sub(firstCommit).Seconds()
		commitRates = append(commitRates, commitRate)
		logf("%s round %d: %d events committed in %s (%.0f/s); last delivery %s after the last commit",
			run, r+1, len(committed), lastCommit.Sub(firstCommit).Round(time.Millisecond), commitRate, lastArrival.Sub(lastCommit).Round(time.Millisecond))
		rc.mu.Lock()
		lost, dups, bad = lost+missing, dups+rc.dups, bad+rc.bad
		roundDups, roundBad := rc.dups, rc.bad
		rc.mu.Unlock()
		if missing+roundDups+roundBad > 0 {
			e.fail(run, fmt.Sprintf("API round %d", r+1), fmt.Sprintf("%d deliveries lost, %d duplicated, %d badly signed", missing, roundDups, roundBad))
		}
		return samples, failures + missing, nil
	}

	// Baseline: the same number of signed envelopes POSTed straight to the
	// receiver by 16 workers (the relay's parallelism), no database involved.
	baseSide := func(ctx context.Context, r int) ([]benchutil.Sample, int, error) {
		rc.reset()
		logf("%s round %d: direct POSTs, %d deliveries, 16 workers", run, r+1, deliveriesPerRound)
		client := webhook.NewClient(webhook.ClientOptions{AllowPrivate: true})
		defer client.CloseIdleConnections()
		tenant := uuid.NewString()
		var mu sync.Mutex
		var samples []benchutil.Sample
		failures := 0
		next := 0
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for {
					mu.Lock()
					n := next
					next++
					mu.Unlock()
					if n >= deliveriesPerRound {
						return
					}
					data, _ := json.Marshal(map[string]string{"id": uuid.NewString(), "name": "wh-direct-" + strconv.Itoa(n)})
					p, err := webhook.NewPayload(webhook.Envelope{ID: uuid.NewString(), Type: outbox.InitiativeCreated, CreatedAt: time.Now(), TenantID: tenant, Data: data})
					start := time.Now()
					var a webhook.Attempt
					if err == nil {
						a = webhook.Deliver(ctx, client, webhook.Target{URL: rc.url + "/direct", Secret: benchHookSecret}, p)
					}
					mu.Lock()
					if err != nil || a.Outcome != webhook.OutcomeDelivered {
						failures++
					} else {
						samples = append(samples, benchutil.Sample{Start: start, End: start.Add(a.Latency)})
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return samples, failures, nil
	}

	res, err := benchutil.Alternate(ctx, e.rounds, apiSide, baseSide)
	if err != nil {
		return fmt.Errorf("%s: %w", run, err)
	}

	// Backlog drain: the rounds above cannot deliver faster than the API commits events
	// (about twice the commit rate with two subscriptions). Here the worker is stopped, a
	// round's events are committed, and the clock runs from the start of a fresh worker
	// process to the last arrival: the delivery capacity of one worker.
	stopWorker()
	rc.reset()
	drainTenants, drainCommitted, drainFailures, err := commitEvents(ctx, e.rounds)
	if err != nil {
		return fmt.Errorf("%s drain: %w", run, err)
	}
	drainStart := time.Now()
	if stopWorker, _, err = e.startWorker(ctx, "webhook backlog drain", ""); err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Minute); rc.count() < len(drainCommitted)*webhookSubs && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // late duplicates would show now
	drainSamples, drainMissing, err := e.deliverySamples(ctx, rc, drainTenants, drainCommitted)
	if err != nil {
		return err
	}
	lastArrival, firstArrival := drainStart, time.Time{}
	for _, s := range drainSamples {
		if s.End.After(lastArrival) {
			lastArrival = s.End
		}
		if firstArrival.IsZero() || s.End.Before(firstArrival) {
			firstArrival = s.End
		}
	}
	rc.mu.Lock()
	drainDups, drainBad := rc.dups, rc.bad
	rc.mu.Unlock()
	drainRate := float64(len(drainSamples)) / lastArrival.Sub(drainStart).Seconds()
	drainNote := fmt.Sprintf("backlog drain: %d events (%d creates failed) committed with the worker stopped, then %d deliveries in %s from the start of a fresh worker process to the last arrival = %.0f deliveries/s (target at least 1,000; the first arrived %s after the process start); %d lost, %d duplicated, %d badly signed",
		len(drainCommitted), drainFailures, len(drainSamples), lastArrival.Sub(drainStart).Round(time.Millisecond), drainRate, firstArrival.Sub(drainStart).Round(time.Millisecond), drainMissing, drainDups, drainBad)
	logf("%s: %s", run, drainNote)
	logf("%s: %s", run, cpuNote(cpu, cpuEvents, webhookSubs))
	if drainMissing+drainDups+drainBad > 0 {
		e.fail(run, "backlog drain", fmt.Sprintf("%d deliveries lost, %d duplicated, %d badly signed", drainMissing, drainDups, drainBad))
	}
	cmp := benchutil.NewComparison(run, "direct: the benchmark POSTs the same number of signed envelopes straight to the same receiver, 16 workers, no database", e.concurrency, res,
		fmt.Sprintf("each round: %d events committed through POST /v1/initiatives (%d clients, each on its own tenant: creates of one tenant are serialised), %d subscription(s) per tenant to a local receiver, delivered by a real `valuecase worker` (outbox relay, attempt 1 from the relay; Temporal is not needed on the happy path and is not running)", events, e.concurrency, webhookSubs),
		"API side: one sample per delivery, from the 201 of the create (the event had committed) to its arrival at the receiver; throughput = deliveries / (first 201 to last arrival): sustained deliveries per second including the drain",
		fmt.Sprintf("all rounds: %d deliveries lost, %d duplicated, %d with a bad signature (target: 0, 0, 0); targets on a 2-core machine: at least 500 deliveries/s and p99 under 250 ms", lost, dups, bad),
		"baseline side: one sample per POST, from send to the receiver's answer (16 workers, whatever the clients column says)",
		fmt.Sprintf("events committed per second through the API, by round: %s (deliveries cannot outpace the commits)", formatRates(commitRates)),
		drainNote,
		cpuNote(cpu, cpuEvents, webhookSubs),
	)
	cmp.SideNames = []string{"deliveries (commit→receipt)", "direct POSTs (no DB)"}
	e.report.Runs = append(e.report.Runs, cmp)
	return nil
}

// webhookTenant creates a benchmark tenant with webhookSubs subscriptions to
// the receiver, stored as POST /v1/webhooks stores them (sealed secret).
func (e *env) webhookTenant(ctx context.Context, box *secretbox.Box, receiverURL string, round int) (benchutil.Tenant, error) {
	name := fmt.Sprintf("bench webhooks round %d %s", round+1, time.Now().UTC().Format(time.RFC3339Nano))
	t, err := benchutil.NewTenant(ctx, e.pool, e.keys, name, benchSubject, []string{rbac.RoleAdmin},
		[]string{string(rbac.InitiativesRead), string(rbac.InitiativesWrite), string(rbac.AdminConfig)})
	if err != nil {
		return t, err
	}
	err = db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
		for k := range webhookSubs {
			id := uuid.New()
			sealed, err := box.Seal([]byte(benchHookSecret), []byte("webhook-secret:"+t.ID.String()+":"+id.String()))
			if err != nil {
				return err
			}
			if _, err := db.Q.WebhookCreate(ctx, tx, dbsqlc.WebhookCreateParams{
				TenantID: t.ID, ID: id, URL: fmt.Sprintf("%s/%s/%d", receiverURL, t.ID, k), Events: []string{outbox.InitiativeCreated},
				SecretSealed: sealed, SecretHint: "****6789", Active: true,
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return t, err
}

// deliverySamples pairs each arrival with the commit of its event and counts
// the deliveries that never arrived.
func (e *env) deliverySamples(ctx context.Context, rc *hookReceiver, tenants [][]benchutil.Tenant, committed map[string]time.Time) ([]benchutil.Sample, int, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var samples []benchutil.Sample
	missing := 0
	for _, ts := range tenants {
		for _, t := range ts {
			err := db.InTenant(ctx, e.pool, t.ID, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, "SELECT id, data->>'id' FROM outbox_events WHERE tenant_id = $1 AND type = $2", t.ID, outbox.InitiativeCreated)
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var eventID uuid.UUID
					var initiativeID string
					if err := rows.Scan(&eventID, &initiativeID); err != nil {
						return err
					}
					start, ok := committed[initiativeID]
					for k := range webhookSubs {
						at, got := rc.arrived[fmt.Sprintf("/%s/%d %s", t.ID, k, eventID)]
						switch {
						case !got:
							missing++
						case ok:
							samples = append(samples, benchutil.Sample{Start: start, End: at})
						}
					}
				}
				return rows.Err()
			})
			if err != nil {
				return nil, 0, err
			}
		}
	}
	return samples, missing, nil
}

// startWorker runs `valuecase worker` on the benchmark database with private
// targets allowed (the receiver is on 127.0.0.1), against the Temporal at
// temporalAddress (empty: none, a port nothing listens on); errors it logs
// fail run. It returns the process id too. Every suite starts its workers
// here, so the peak RSS table covers them all.
func (e *env) startWorker(ctx context.Context, run, temporalAddress string) (func(), int, error) {
	if _, err := os.Stat(webhookValuecase); err != nil {
		return nil, 0, fmt.Errorf("--valuecase %s: %w (make bench builds it)", webhookValuecase, err)
	}
	port := func() string {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		defer l.Close()
		return l.Addr().String()
	}
	// A file per worker: a later suite's worker must not overwrite the log a failure points to.
	e.workers++
	logPath := fmt.Sprintf("%s/worker-%d-%s.log", e.workDir, e.workers, strings.ReplaceAll(run, " ", "-"))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, 0, err
	}
	if temporalAddress == "" {
		temporalAddress = port()
	}
	cmd := exec.Command(webhookValuecase, "worker")
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+e.databaseURL, "TEMPORAL_ADDRESS="+temporalAddress, "WORKER_HTTP_ADDR="+port(),
		"OUTBOUND_ALLOW_PRIVATE_NETWORKS=true", "LOG_LEVEL=warn")
	if workerGOMEMLIMIT != "off" { // Go's soft memory limit, as the API's (docs/configuration.md, Sizing)
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+workerGOMEMLIMIT)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, 0, err
	}
	logf("worker started (pid %d, log %s)", cmd.Process.Pid, logPath)
	e.rss.WorkerStarted(cmd.Process.Pid)
	return func() {
		e.rss.WorkerStopping(cmd.Process.Pid)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logFile.Close()
		if b, err := os.ReadFile(logPath); err == nil && bytes.Contains(b, []byte(`"level":"ERROR"`)) {
			e.fail(run, "worker", "the worker logged errors; see "+logPath)
		}
	}, cmd.Process.Pid, nil
}

// waitOutboxDrained waits until earlier suites' events are published, so the
// measurement does not queue behind them.
func (e *env) waitOutboxDrained(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var n int
		err := db.InSystem(ctx, e.pool, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT count(*) FROM outbox_events WHERE published_at IS NULL").Scan(&n)
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the worker did not publish the outbox backlog of earlier suites in time")
		}
		logf("waiting for the worker to publish %d earlier events", n)
		time.Sleep(time.Second)
	}
}

func formatRates(rs []float64) string {
	out := ""
	for i, r := range rs {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%.0f", r)
	}
	return out
}
