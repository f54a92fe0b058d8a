package benchutil

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/valuecase/valuecase/db/dbtest"
)

func TestPercentile(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(i+1) * time.Millisecond // 1..100 ms
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{
		{50, 50 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{100, 100 * time.Millisecond},
		{0.1, 1 * time.Millisecond},
	} {
		if got := Percentile(lat, tc.p); got != tc.want {
			t.Errorf("Percentile(1..100ms, %v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := Percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("one sample: %v", got)
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("no samples: %v", got)
	}
}

func TestSummarize(t *testing.T) {
	t0 := time.Unix(1000, 0)
	samples := []Sample{
		{Start: t0, End: t0.Add(10 * time.Millisecond)},
		{Start: t0.Add(500 * time.Millisecond), End: t0.Add(520 * time.Millisecond)},
		{Start: t0.Add(900 * time.Millisecond), End: t0.Add(time.Second)},
		{Start: t0.Add(200 * time.Millisecond), End: t0.Add(230 * time.Millisecond)},
	}
	s := Summarize(samples, 2)
	if s.Count != 4 || s.Errors != 2 || s.ElapsedSeconds != 1 || s.PerSecond != 4 {
		t.Errorf("count/errors/elapsed/rate = %d/%d/%v/%v, want 4/2/1/4", s.Count, s.Errors, s.ElapsedSeconds, s.PerSecond)
	}
	if s.P50MS != 20 || s.P99MS != 100 || s.MaxMS != 100 {
		t.Errorf("p50/p99/max = %v/%v/%v, want 20/100/100", s.P50MS, s.P99MS, s.MaxMS)
	}
}

func TestQueriesParseAndBind(t *testing.T) {
	q := Queries{}
	err := q.parse("x.sql", `-- name: ThingCreate :one
-- A comment line that is dropped.
INSERT INTO things (tenant_id, name, note)
VALUES (@tenant_id, sqlc.arg('name'), sqlc.narg('note'))
RETURNING *;

-- name: ThingList :many
SELECT * FROM things WHERE tenant_id = @tenant_id::uuid AND (sqlc.narg(kind)::text IS NULL OR kind = sqlc.narg(kind)::text)
LIMIT @page_limit;
`)
	if err != nil {
		t.Fatal(err)
	}
	create, err := q.Get("ThingCreate")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(create, "--") || strings.HasSuffix(create, ";") {
		t.Errorf("comment or semicolon kept: %q", create)
	}
	if got, want := strings.Join(Params(create), ","), "name,note,tenant_id"; got != want {
		t.Errorf("Params = %s, want %s", got, want)
	}
	got := Bind(create, map[string]string{"note": Null})
	want := "INSERT INTO things (tenant_id, name, note)\nVALUES (:tenant_id, :name, NULLIF(:null_param, '-'))\nRETURNING *"
	if got != want {
		t.Errorf("Bind:\n%s\nwant\n%s", got, want)
	}
	list, _ := q.Get("ThingList")
	if got := Bind(list, nil); !strings.Contains(got, ":tenant_id::uuid") || !strings.Contains(got, "(:kind::text IS NULL OR kind = :kind::text)") {
		t.Errorf("Bind(list) = %s", got)
	}
	if _, err := q.Get("Nope"); err == nil {
		t.Error("Get of an unknown query succeeded")
	}
}

func TestQueriesOfTheRepository(t *testing.T) {
	q, err := LoadQueries("../../db/queries")
	if err != nil {
		t.Fatal(err)
	}
	sql, err := q.Get("InitiativeCountLive")
	if err != nil {
		t.Fatal(err)
	}
	if got := Bind(sql, nil); got != "SELECT count(*) FROM initiatives WHERE tenant_id = :tenant_id AND status <> 'archived'" {
		t.Errorf("InitiativeCountLive = %q", got)
	}
	// sqlc.embed(t) is sqlc's own syntax: the baseline runs it as t.* (the columns sqlc writes out).
	list, err := q.Get("InitiativeList")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(list, "SELECT initiatives.*, count(*) OVER () AS total") || strings.Contains(list, "sqlc.embed") {
		t.Errorf("InitiativeList = %q", list)
	}
}

func TestScriptChecksVariables(t *testing.T) {
	dir := t.TempDir()
	ok := NewScript("tenant_id").Meta(`\set n random(1, 10)`)
	ok.SQL("BEGIN")
	ok.SQLGset("SELECT id FROM t WHERE tenant_id = :tenant_id::uuid AND n = :n", "r_")
	ok.SQL("SELECT :r_id;")
	if err := ok.Write(filepath.Join(dir, "ok.pgbench")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "ok.pgbench"))
	want := "\\set n random(1, 10)\nBEGIN;\nSELECT id FROM t WHERE tenant_id = :tenant_id::uuid AND n = :n \\gset r_\nSELECT :r_id;\n"
	if string(b) != want {
		t.Errorf("script:\n%s\nwant\n%s", b, want)
	}
	bad := NewScript().SQL("SELECT :missing")
	if err := bad.Write(filepath.Join(dir, "bad.pgbench")); err == nil || !strings.Contains(err.Error(), ":missing") {
		t.Errorf("undefined variable: err = %v", err)
	}
}

func TestPositional(t *testing.T) {
	if got := Positional("SELECT set_config('x', $1, true), $2, $10", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"); got != "SELECT set_config('x', :a, true), :b, :j" {
		t.Errorf("Positional = %q", got)
	}
}

func TestPGBenchLog(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "run")
	// client 0 in thread 0, client 1 in thread 1; pg15 format (time in µs, end epoch + µs).
	_ = os.WriteFile(prefix+".123", []byte("0 1 5000 0 1700000000 100000\n0 2 1000 0 1700000000 200000\n0 3 failed 0 1700000000 300000\n"), 0o644)
	_ = os.WriteFile(prefix+".123.1", []byte("1 1 6000 0 1700000000 150000\n1 2 2000 0 1700000000 400000\n"), 0o644)
	_ = os.WriteFile(prefix+".out", []byte("not a log\n"), 0o644)
	var r PGBenchResult
	if err := r.readLogs(prefix, 1); err != nil {
		t.Fatal(err)
	}
	if r.Processed != 4 || r.Errors != 1 || len(r.Samples) != 2 {
		t.Fatalf("processed/errors/samples = %d/%d/%d, want 4/1/2", r.Processed, r.Errors, len(r.Samples))
	}
	s := r.Summary()
	if s.P50MS != 1 || s.MaxMS != 2 {
		t.Errorf("p50/max = %v/%v, want 1/2 (warm-up dropped)", s.P50MS, s.MaxMS)
	}
	// first measured start 0.199 s, last end 0.400 s
	if s.ElapsedSeconds < 0.2009 || s.ElapsedSeconds > 0.2011 {
		t.Errorf("elapsed = %v, want 0.201", s.ElapsedSeconds)
	}
}

func TestPGBenchArgs(t *testing.T) {
	p := PGBench{Path: "pgbench", ConnURL: "postgres://u:p@h:5432/d?sslmode=disable&pool_max_conns=9", Script: "s.pgbench",
		Clients: 1, Threads: 2, Transactions: 5, Vars: map[string]string{"b": "2", "a": "x y"}, LogPrefix: "/tmp/l"}
	args, err := p.Args()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(args, " ")
	want := "-n -M prepared -c 1 -j 1 -f s.pgbench -l --log-prefix /tmp/l -t 5 -D a=x y -D b=2 -D null_param=- postgres://u:p@h:5432/d?options=-c%20jit%3Doff&sslmode=disable"
	if got != want {
		t.Errorf("args:\n%s\nwant\n%s", got, want)
	}
	p.Duration = time.Second
	if _, err := p.Args(); err == nil {
		t.Error("both -t and -T accepted")
	}
}

// pgbenchPath is the real pgbench; a machine without one skips, except in CI, which installs it.
func pgbenchPath(t *testing.T) string {
	t.Helper()
	path, err := FindPGBench("pgbench")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v; CI installs PostgreSQL's server package, which ships pgbench", err)
		}
		t.Skip(err)
	}
	return path
}

// Null is a NULL when real pgbench runs it against PostgreSQL, in custom and
// generic plans alike (10 executions of a prepared statement), as a text, a
// uuid and in a filter; a non-NULL value would divide by zero and abort the client.
func TestNullRunsAsNULL(t *testing.T) {
	path := pgbenchPath(t)
	dir := t.TempDir()
	s := NewScript()
	s.SQL("SELECT 1 / ((" + Null + "::text IS NULL)::int * (" + Null + "::uuid IS NULL)::int)")
	s.SQL("SELECT 1 / count(*)::int FROM (VALUES ('a'), (NULL)) v(x) WHERE (" + Null + "::text IS NULL OR x = " + Null + "::text)")
	script := filepath.Join(dir, "null.pgbench")
	if err := s.Write(script); err != nil {
		t.Fatal(err)
	}
	res, err := PGBench{Path: path, ConnURL: dbtest.URL(t), Script: script, Clients: 1, Transactions: 10,
		LogPrefix: filepath.Join(dir, "log")}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Processed != 10 {
		t.Fatalf("%d transactions, %d errors, want 10 and 0:\n%s", res.Processed, res.Errors, res.Output)
	}
}

// pgbench's sessions start with the service's settings (db.SessionSettings), or with those the
// URL names, as the service's own do: a script that divides by zero unless JIT is as expected.
func TestPGBenchRunsWithTheServiceSettings(t *testing.T) {
	path := pgbenchPath(t)
	base := dbtest.URL(t)
	for _, c := range []struct{ url, jit string }{{base, "off"}, {base + "&jit=on", "on"}} {
		dir := t.TempDir()
		s := NewScript()
		s.SQL("SELECT 1 / (current_setting('jit') = '" + c.jit + "')::int")
		script := filepath.Join(dir, "jit.pgbench")
		if err := s.Write(script); err != nil {
			t.Fatal(err)
		}
		res, err := PGBench{Path: path, ConnURL: c.url, Script: script, Clients: 1, Transactions: 2,
			LogPrefix: filepath.Join(dir, "log")}.Run(context.Background())
		if err != nil {
			t.Fatalf("jit %s: %v", c.jit, err)
		}
		if res.Errors != 0 || res.Processed != 2 {
			t.Fatalf("jit %s: %d transactions, %d errors, want 2 and 0:\n%s", c.jit, res.Processed, res.Errors, res.Output)
		}
	}
}

func TestHTTPLoad(t *testing.T) {
	var (
		n      atomic.Int64
		mu     sync.Mutex
		paths  = map[string]bool{} // every request is sent once, as NewRequest set it
		posted int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		if paths[r.Method+" "+r.URL.Path] {
			t.Errorf("%s %s sent twice", r.Method, r.URL.Path)
		}
		paths[r.Method+" "+r.URL.Path] = true
		if r.Method == http.MethodPost && string(body) == "x" {
			posted++
		}
		mu.Unlock()
		if n.Add(1)%10 == 0 {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	var seen atomic.Int64
	res, err := HTTPLoad{
		BaseURL: srv.URL, Workers: 4, Warmup: 2, PerWorker: 10,
		NewRequest: func(i int, req *fasthttp.Request) error {
			seen.Add(1)
			req.SetRequestURI("/n/" + strconv.Itoa(i))
			return nil
		},
	}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 48 || len(paths) != 48 || !paths["GET /n/0"] || !paths["GET /n/47"] {
		t.Errorf("%d requests built, %d distinct received, want 4 x (2 + 10) of GET /n/0 to /n/47", seen.Load(), len(paths))
	}
	if res.Errors == 0 || res.ErrorStatus[500] != res.Errors || len(res.Samples)+res.Errors > 48 || len(res.Samples) < 40-res.Errors {
		t.Errorf("samples %d, errors %d (%v)", len(res.Samples), res.Errors, res.ErrorStatus)
	}
	if !strings.Contains(res.ErrorText(), "HTTP 500") || !strings.Contains(res.ErrorText(), "boom") {
		t.Errorf("ErrorText = %q", res.ErrorText())
	}

	res, err = HTTPLoad{
		BaseURL: srv.URL, Workers: 2, Duration: 200 * time.Millisecond,
		NewRequest: func(i int, req *fasthttp.Request) error {
			req.Header.SetMethod(http.MethodPost)
			req.SetRequestURI("/n/" + strconv.Itoa(i))
			req.SetBodyString("x")
			return nil
		},
		OK: func(int) bool { return true },
	}.Run(context.Background())
	if err != nil || res.Errors != 0 || len(res.Samples) == 0 || posted < len(res.Samples) {
		t.Errorf("duration run: err %v, errors %d, samples %d, POSTs with the body received %d", err, res.Errors, len(res.Samples), posted)
	}
}

func TestAlternate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var order []string
	side := func(name string, rate int) Side {
		return func(_ context.Context, r int) ([]Sample, int, error) {
			order = append(order, fmt.Sprintf("%s%d", name, r+1))
			// rate samples of 1 ms each, spread over one second
			out := make([]Sample, rate)
			for i := range out {
				start := t0.Add(time.Duration(r)*time.Hour + time.Duration(i)*time.Second/time.Duration(rate))
				out[i] = Sample{Start: start, End: start.Add(time.Millisecond)}
			}
			out[rate-1].End = out[0].Start.Add(time.Second) // each round spans exactly 1 s
			return out, 1, nil
		}
	}
	res, err := Alternate(context.Background(), 3, side("a", 10), side("b", 20))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, " "); got != "a1 b1 b2 a2 a3 b3" {
		t.Errorf("order %s", got)
	}
	// The hour between rounds is not measured time.
	if res.API.PerSecond != 10 || res.Baseline.PerSecond != 20 || res.API.Errors != 3 {
		t.Errorf("rates %v/%v errors %d", res.API.PerSecond, res.Baseline.PerSecond, res.API.Errors)
	}
	if len(res.RoundRatios) != 3 || res.RoundRatios[1] != 0.5 {
		t.Errorf("round ratios %v", res.RoundRatios)
	}
	// Each round's slowest sample is the one stretched to the end of its second: 1/10 s against 1/20 s.
	if len(res.RoundP99Ratios) != 3 || res.RoundP99Ratios[1] != 2 {
		t.Errorf("round p99 ratios %v", res.RoundP99Ratios)
	}
}

// A scaling table's per-unit time is the median sample over the units, and
// each row's ratio is against the first row's per-unit time.
func TestScalingAdd(t *testing.T) {
	s := Scaling{Name: "import", Unit: "record", PerUnitIn: "µs"}
	s.Add("1x", 10_000, []time.Duration{3 * time.Second, time.Second, 2 * time.Second}) // median 2 s: 200 µs a record
	s.Add("10x", 100_000, []time.Duration{10 * time.Second})                            // 100 µs a record
	s.Add("50x", 500_000, []time.Duration{150 * time.Second})                           // 300 µs a record
	want := []ScalingRow{
		{Scale: "1x", Units: 10_000, Samples: 3, TotalMS: 2000, PerUnit: 200, Ratio: 1},
		{Scale: "10x", Units: 100_000, Samples: 1, TotalMS: 10_000, PerUnit: 100, Ratio: 0.5},
		{Scale: "50x", Units: 500_000, Samples: 1, TotalMS: 150_000, PerUnit: 300, Ratio: 1.5},
	}
	for i, w := range want {
		if s.Rows[i] != w {
			t.Errorf("row %d = %+v, want %+v", i, s.Rows[i], w)
		}
	}
	ms := Scaling{Name: "realisation", Unit: "initiative", PerUnitIn: "ms"}
	ms.Add("1x", 10, []time.Duration{5 * time.Millisecond})
	if ms.Rows[0].PerUnit != 0.5 {
		t.Errorf("5 ms over 10 initiatives = %v ms each, want 0.5", ms.Rows[0].PerUnit)
	}
	ms.AddAtLeast("100x", 1000, []time.Duration{5 * time.Second}) // every request gave up at a 5 s deadline
	if r := ms.Rows[1]; !r.AtLeast || r.PerUnit != 5 || r.Ratio != 10 {
		t.Errorf("a scale that never finished = %+v, want at least 5 ms an initiative, 10x", r)
	}
	var b strings.Builder
	(&Report{Scaling: []Scaling{s, ms}}).Print(&b)
	for _, line := range []string{"500,000 records", "300 µs/record", "1.50x", "0.500 ms/initiative", "≥ 5.000 ms/initiative", "≥ 10.00x"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("the printed report lacks %q:\n%s", line, b.String())
		}
	}
}
