// Command benchmark loads a running valuecase API and compares it with
// pgbench running the same SQL (the sqlc queries of db/queries) in the same
// run, printing the ratios. `make bench` (scripts/bench.sh) starts a fresh
// database and API and runs every suite; see docs/benchmarks.md.
//
// A suite is one resource's runs. To add one, write a func(ctx, *env) error
// that appends benchutil.Comparison values to e.report (HTTP load with
// benchutil.HTTPLoad, baseline with benchutil.PGBench built from e.queries)
// and register it in suites.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/benchutil"
	"github.com/valuecase/valuecase/internal/config"
)

// suite is a named group of runs.
type suite struct {
	name, help string
	// flags registers the suite's own flags (optional).
	flags func(fs *flag.FlagSet)
	run   func(ctx context.Context, e *env) error
}

// suites run in this order for "all".
var suites = []suite{
	initiativesSuite,
	webhooksSuite,
	varianceSuite,
	bulkSuite,
	analyticsSuite,
	exportSuite,
	syncSuite,
	workflowsSuite,
	fairnessSuite,
	scalingSuite,
}

// env is what every suite gets: the shared settings and connections.
type env struct {
	apiURL      string
	databaseURL string
	concurrency int
	duration    time.Duration
	warmup      int
	rounds      int
	pgbenchPath string
	workDir     string // where pgbench scripts and logs go
	pool        *pgxpool.Pool
	admin       *pgxpool.Pool // the scaling suite's superuser pool (BENCH_COPY_DATABASE_URL), or nil
	keys        *auth.KeyStore
	client      *http.Client
	queries     benchutil.Queries
	report      *benchutil.Report
	rss         *benchutil.RSSWatch // peaks of the API and the workers, by suite
	workers     int                 // workers started so far: each logs to a file of its own
}

// logf prints progress to stderr.
func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "==> "+format+"\n", args...) }

const usage = `Usage: benchmark [flags] SUITE...    run suites ("all": every one) against a running API
       benchmark list                 list the suites
       benchmark free-port            print a free TCP port on 127.0.0.1

Each run loads the API over HTTP and runs pgbench on the same SQL in the same
run; the table shows both and their ratio. Flags default to environment
variables (shown in brackets). make bench runs it against a fresh database.

Flags:
`

func main() {
	if err := run(os.Args[1:]); err != nil {
		var quiet exitError
		if !errors.Is(err, flag.ErrHelp) && !errors.As(err, &quiet) {
			fmt.Fprintln(os.Stderr, "benchmark:", err)
		}
		os.Exit(exitCode(err))
	}
}

type exitError int

func (e exitError) Error() string { return "exit " + strconv.Itoa(int(e)) }

func exitCode(err error) int {
	var e exitError
	if errors.As(err, &e) {
		return int(e)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 1
}

func run(args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "free-port":
			return freePort()
		case "list":
			for _, s := range suites {
				fmt.Printf("%-14s %s\n", s.name, s.help)
			}
			return nil
		}
	}
	fs := flag.NewFlagSet("benchmark", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), "\nSuites:")
		for _, s := range suites {
			fmt.Fprintf(fs.Output(), "  %-14s %s\n", s.name, s.help)
		}
	}
	var (
		apiURL      = fs.String("api", envOr("BENCH_API_URL", "http://127.0.0.1:8080"), "base URL of the running API [BENCH_API_URL]")
		databaseURL = fs.String("database-url", envOr("DATABASE_URL", configDefault("DATABASE_URL")), "the API's database, for setup and pgbench [DATABASE_URL]")
		keysDir     = fs.String("keys-dir", envOr("AUTH_SIGNING_KEYS_DIR", configDefault("AUTH_SIGNING_KEYS_DIR")), "the API's signing keys, to mint tokens [AUTH_SIGNING_KEYS_DIR]")
		duration    = fs.Duration("duration", envDuration("BENCH_DURATION", 10*time.Second), "measured time of each duration-based run, per side, over all rounds [BENCH_DURATION]")
		rounds      = fs.Int("rounds", envInt("BENCH_ROUNDS", 4), "rounds of each run, alternating which side goes first [BENCH_ROUNDS]")
		concurrency = fs.Int("concurrency", envInt("BENCH_CONCURRENCY", 8), "HTTP workers and pgbench clients [BENCH_CONCURRENCY]")
		warmup      = fs.Int("warmup", envInt("BENCH_WARMUP", 3), "first requests/transactions of each worker/client not measured [BENCH_WARMUP]")
		pgbench     = fs.String("pgbench", envOr("PGBENCH", "pgbench"), "pgbench binary [PGBENCH]")
		queriesDir  = fs.String("queries", "db/queries", "directory of the sqlc query files")
		apiPID      = fs.Int("api-pid", envInt("BENCH_API_PID", 0), "the API's process id, for its peak RSS by suite (0: not measured) [BENCH_API_PID]")
		out         = fs.String("out", envOr("BENCH_OUT", ".data/bench/results.json"), "JSON results file [BENCH_OUT]")
		notes       multiFlag
	)
	fs.Var(&notes, "note", "a note to print with the results and store in the JSON (repeatable)")
	for _, s := range suites {
		if s.flags != nil {
			s.flags(fs)
		}
	}
	// Flags may come before or after the suite names.
	var names []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(envErrs) > 0 {
		return errors.Join(envErrs...)
	}
	chosen, err := pickSuites(names)
	if err != nil {
		fs.Usage()
		return err
	}
	if *concurrency < 1 || *warmup < 0 || *rounds < 1 || *duration < time.Second {
		return errors.New("want --concurrency >= 1, --warmup >= 0, --rounds >= 1 and --duration >= 1s")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	pgbenchPath, err := benchutil.FindPGBench(*pgbench)
	if err != nil {
		return err
	}
	pgbenchVersion, err := benchutil.PGBenchVersion(ctx, pgbenchPath)
	if err != nil {
		return err
	}
	queries, err := benchutil.LoadQueries(*queriesDir)
	if err != nil {
		return fmt.Errorf("%w (run benchmark in the repository root, or set --queries)", err)
	}
	pool, err := db.NewPool(ctx, *databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	keys, err := auth.LoadKeyStore(*keysDir)
	if err != nil {
		return err
	}
	e := &env{
		apiURL: strings.TrimRight(*apiURL, "/"), databaseURL: *databaseURL, concurrency: *concurrency,
		duration: *duration, warmup: *warmup, rounds: *rounds, pgbenchPath: pgbenchPath, workDir: filepath.Dir(*out),
		pool: pool, keys: keys, client: benchutil.NewHTTPClient(*concurrency), queries: queries,
	}
	if err := e.checkAPI(ctx); err != nil {
		return err
	}
	e.report = &benchutil.Report{
		StartedAt: time.Now().UTC(),
		Machine:   benchutil.ReadMachine(ctx, pool, pgbenchVersion),
		Settings: map[string]string{
			"api": e.apiURL, "database": redact(*databaseURL), "concurrency": strconv.Itoa(*concurrency),
			"duration": duration.String(), "rounds": strconv.Itoa(*rounds), "warmup_per_client": strconv.Itoa(*warmup), "suites": strings.Join(suiteNames(chosen), ","),
		},
		Notes: append(notes, commonNotes(*concurrency, *warmup, *rounds)...),
	}
	e.rss = benchutil.NewRSSWatch(*apiPID)
	defer e.rss.Close()
	for _, s := range chosen {
		logf("suite %s", s.name)
		e.rss.BeginSuite(s.name)
		err := s.run(ctx, e)
		peak := e.rss.EndSuite()
		e.report.Memory = append(e.report.Memory, peak)
		if err != nil {
			return fmt.Errorf("suite %s: %w", s.name, err)
		}
		logf("suite %s: peak RSS API %.1f MB, worker %.1f MB", s.name, peak.APIMB, peak.WorkerMB)
		if !peak.Pass {
			e.fail(s.name, "memory", fmt.Sprintf("peak RSS API %.1f MB, worker %.1f MB: over the %d MB goal", peak.APIMB, peak.WorkerMB, benchutil.RSSLimitMB))
		}
	}
	e.report.FinishedAt = time.Now().UTC()
	e.report.Machine.LoadAvgEnd = benchutil.LoadAvg()
	e.report.Print(os.Stdout)
	if err := e.report.WriteJSON(*out); err != nil {
		return err
	}
	fmt.Printf("\nResults written to %s\n", *out)
	if len(e.report.Errors) > 0 {
		return exitError(1)
	}
	return nil
}

func commonNotes(concurrency, warmup, rounds int) []string {
	return []string{
		benchutil.LimitsNote,
		fmt.Sprintf("both sides: %d concurrent clients in a closed loop (HTTP keep-alive workers; pgbench -M prepared clients, as pgx prepares its statements); in each round the first %d requests/transactions of each client are warm-up and not measured", concurrency, warmup),
		fmt.Sprintf("each run has %d rounds per side, alternating which side goes first (API, pgbench; pgbench, API; ...), so a slow spell of the machine does not land on one side only", rounds),
		"a write sends BEGIN and the tenant setting with the request's first statement (UserAuthenticate) as one pipelined batch (db.BeginTenantDeferred: one round trip for the three); a GET sends no BEGIN or COMMIT: each of its batches is an implicit transaction behind the tenant setting (db.BeginTenantReads), the first with UserAuthenticate (db.Ride; an analysis checks its caller, then pins its statements to one transaction for its statement_timeout); the pgbench scripts run each request as one transaction, statement by statement, unless a run's notes say the API pipelines more",
		"throughput = measured requests / measured time (per round: first measured start to last measured end; summed over rounds); p50/p99 by nearest rank over all rounds; both sides computed the same way, from per-request timings and from pgbench's per-transaction log (-l)",
		"the load generator, pgbench, the API and PostgreSQL share this machine's CPUs, and other work on it (see the load average) adds noise: compare the ratios of one run, not absolute numbers across runs",
	}
}

func pickSuites(names []string) ([]suite, error) {
	if len(names) == 0 {
		return nil, errors.New("name a suite, or all")
	}
	if slices.Contains(names, "all") {
		return suites, nil
	}
	var out []suite
	for _, n := range names {
		i := slices.IndexFunc(suites, func(s suite) bool { return s.name == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown suite %q (have: %s)", n, strings.Join(suiteNames(suites), ", "))
		}
		out = append(out, suites[i])
	}
	return out, nil
}

func suiteNames(ss []suite) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.name
	}
	return out
}

// checkAPI makes sure something answers /health at the API URL.
func (e *env) checkAPI(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.apiURL+"/health", nil)
	if err != nil {
		return fmt.Errorf("--api: %w", err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("the API does not answer at %s: %w", e.apiURL, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s/health: %s", e.apiURL, resp.Status)
	}
	return nil
}

// fail records failures of a run; the report then says so loudly and the
// command exits non-zero.
func (e *env) fail(run, side, detail string) {
	e.report.Errors = append(e.report.Errors, fmt.Sprintf("%s, %s: %s", run, side, detail))
	fmt.Fprintf(os.Stderr, "!!! %s, %s: %s\n", run, side, detail)
}

// poolTracker sums how the API's connection pool behaved during the API
// rounds of a run, from the pool counters of its /metrics.
type poolTracker struct {
	e            *env
	before       map[string]float64
	waits, secs  float64
	maxConns     float64
	err          error
	measuredOnce bool
}

func (e *env) poolTracker() *poolTracker { return &poolTracker{e: e} }

func (p *poolTracker) scrape(ctx context.Context) map[string]float64 {
	m, err := benchutil.ScrapeMetrics(ctx, p.e.client, p.e.apiURL+"/metrics", "valuecase_db_pool_")
	if err != nil && p.err == nil {
		p.err = err
		logf("WARNING: could not read the API's pool metrics (GET /metrics failed; details in the results)")
	}
	return m
}

// start and stop bracket one API round.
func (p *poolTracker) start(ctx context.Context) { p.before = p.scrape(ctx) }

func (p *poolTracker) stop(ctx context.Context) {
	after := p.scrape(ctx)
	if p.before == nil || after == nil {
		return
	}
	p.measuredOnce = true
	p.waits += after["valuecase_db_pool_empty_acquire_total"] - p.before["valuecase_db_pool_empty_acquire_total"]
	p.secs += after["valuecase_db_pool_acquire_wait_seconds_total"] - p.before["valuecase_db_pool_acquire_wait_seconds_total"]
	p.maxConns = after["valuecase_db_pool_max_conns"]
}

// note describes the pool during the API rounds.
func (p *poolTracker) note() string {
	if p.err != nil {
		msg := p.err.Error()
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		prefix := "API pool metrics unavailable"
		if p.measuredOnce {
			prefix = fmt.Sprintf("API pool (max %.0f connections), rounds before /metrics failed: %.0f acquires waited for a free connection, %.2f s in total; then unavailable", p.maxConns, p.waits, p.secs)
		}
		return prefix + ": " + msg
	}
	return fmt.Sprintf("API pool: max %.0f connections; %.0f acquires waited for a free connection, %.2f s waiting in total",
		p.maxConns, p.waits, p.secs)
}

// freePort prints a TCP port on 127.0.0.1 that nothing listens on.
func freePort() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Println(l.Addr().(*net.TCPAddr).Port)
	return nil
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}

func envOr(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

// envErrs collects environment variables with values that do not parse.
var envErrs []error

func envInt(name string, def int) int {
	v := envOr(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		envErrs = append(envErrs, fmt.Errorf("%s=%q: want an integer", name, v))
		return def
	}
	return n
}

func envDuration(name string, def time.Duration) time.Duration {
	v := envOr(name, "")
	if v == "" {
		return def
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d
	}
	if n, err := strconv.Atoi(v); err == nil { // plain seconds, as pgbench -T
		return time.Duration(n) * time.Second
	}
	envErrs = append(envErrs, fmt.Errorf("%s=%q: want a duration such as 10s", name, v))
	return def
}

func configDefault(name string) string {
	for _, v := range config.Vars {
		if v.Name == name {
			return v.Default
		}
	}
	return ""
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
