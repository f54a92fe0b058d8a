package benchutil

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Machine is what the numbers were measured on.
type Machine struct {
	CPUs       int               `json:"cpus"`
	CPUModel   string            `json:"cpu_model,omitempty"`
	GOMAXPROCS int               `json:"gomaxprocs"`
	GoVersion  string            `json:"go_version"`
	Kernel     string            `json:"kernel,omitempty"`
	PostgreSQL string            `json:"postgresql"`
	PGSettings map[string]string `json:"postgresql_settings"`
	PGBench    string            `json:"pgbench"`
	// Load averages (1, 5, 15 min) when the runs started and ended: other
	// work on the machine shows here.
	LoadAvgStart string `json:"loadavg_start,omitempty"`
	LoadAvgEnd   string `json:"loadavg_end,omitempty"`
}

// pgSettingsShown are the server settings that move these numbers most.
var pgSettingsShown = []string{"server_version", "max_connections", "shared_buffers", "fsync", "synchronous_commit", "plan_cache_mode", "autovacuum"}

// ReadMachine collects the machine facts.
func ReadMachine(ctx context.Context, pool *pgxpool.Pool, pgbenchVersion string) Machine {
	m := Machine{
		CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
		PGBench: pgbenchVersion, PGSettings: map[string]string{}, LoadAvgStart: LoadAvg(),
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = runtime.GOOS + " " + strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	_ = pool.QueryRow(ctx, "SELECT version()").Scan(&m.PostgreSQL)
	for _, name := range pgSettingsShown {
		var v string
		if err := pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err == nil {
			m.PGSettings[name] = v
		}
	}
	return m
}

// LoadAvg is the first three fields of /proc/loadavg, or "".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Comparison is one run: the service against its same-run baseline.
type Comparison struct {
	Name     string  `json:"name"`
	Baseline string  `json:"baseline"`
	Clients  int     `json:"clients"`
	Rounds   int     `json:"rounds"`
	API      Summary `json:"api"`
	PGBench  Summary `json:"pgbench"`
	// RoundRatios is each round's throughput ratio API/pgbench, RoundP99Ratios its p99 ratio.
	RoundRatios    []float64 `json:"round_throughput_ratios"`
	RoundP99Ratios []float64 `json:"round_p99_ratios"`
	// API / pgbench
	Ratios struct {
		PerSecond float64 `json:"per_second"`
		P50       float64 `json:"p50"`
		P95       float64 `json:"p95"`
		P99       float64 `json:"p99"`
	} `json:"ratios_api_over_pgbench"`
	Notes []string `json:"notes,omitempty"`
	// MachineCPU is how the machine's CPUs were spent while each side ran.
	MachineCPU struct {
		API      CPUUse `json:"api"`
		Baseline CPUUse `json:"baseline"`
	} `json:"machine_cpu"`
	// SideNames label the two sides in the table when the baseline is not
	// pgbench (default: API, pgbench).
	SideNames []string `json:"side_names,omitempty"`
}

// NewComparison computes the ratios.
func NewComparison(name, baseline string, clients int, r Compared, notes ...string) Comparison {
	c := Comparison{Name: name, Baseline: baseline, Clients: clients, Rounds: len(r.RoundRatios), API: r.API, PGBench: r.Baseline,
		RoundRatios: r.RoundRatios, RoundP99Ratios: r.RoundP99Ratios, Notes: notes}
	c.MachineCPU.API, c.MachineCPU.Baseline = r.APICPU, r.BaselineCPU
	api, pgbench := r.API, r.Baseline
	c.Ratios.PerSecond = Ratio(api.PerSecond, pgbench.PerSecond)
	c.Ratios.P50 = Ratio(api.P50MS, pgbench.P50MS)
	c.Ratios.P95 = Ratio(api.P95MS, pgbench.P95MS)
	c.Ratios.P99 = Ratio(api.P99MS, pgbench.P99MS)
	return c
}

// Report is everything one `benchmark` invocation measured.
type Report struct {
	StartedAt  time.Time         `json:"started_at"`
	FinishedAt time.Time         `json:"finished_at"`
	Machine    Machine           `json:"machine"`
	Settings   map[string]string `json:"settings"`
	Runs       []Comparison      `json:"runs"`
	Scaling    []Scaling         `json:"scaling,omitempty"`
	Notes      []string          `json:"notes"`
	// Memory is the peak resident set of the API and the workers, by suite.
	Memory []MemoryPeak `json:"memory"`
	// Errors lists failed requests or transactions; a report with any is not a result.
	Errors []string `json:"errors"`
}

// Print writes the machine facts, the result table and the notes.
func (r *Report) Print(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "\nMachine: %d CPUs (%s), GOMAXPROCS %d, %s, %s\n", m.CPUs, orDash(m.CPUModel), m.GOMAXPROCS, m.GoVersion, orDash(m.Kernel))
	fmt.Fprintf(w, "PostgreSQL: %s\n", orDash(m.PostgreSQL))
	var settings []string
	for _, k := range pgSettingsShown[1:] {
		if v, ok := m.PGSettings[k]; ok {
			settings = append(settings, k+"="+v)
		}
	}
	fmt.Fprintf(w, "  settings: %s\n", strings.Join(settings, " "))
	fmt.Fprintf(w, "pgbench: %s\n", orDash(m.PGBench))
	fmt.Fprintf(w, "Load average (1/5/15 min): %s at start, %s at end\n\n", orDash(m.LoadAvgStart), orDash(m.LoadAvgEnd))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tside\tclients\tmeasured\terrors\tthroughput/s\tp50 ms\tp95 ms\tp99 ms\t")
	for _, c := range r.Runs {
		names, ratio := c.SideNames, "ratio first/second"
		if len(names) != 2 {
			names, ratio = []string{"API (HTTP requests)", "pgbench (same SQL, tx)"}, "ratio API/pgbench"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t\n", c.Name, names[0], c.Clients, c.API.Count, c.API.Errors, c.API.PerSecond, c.API.P50MS, c.API.P95MS, c.API.P99MS)
		fmt.Fprintf(tw, "\t%s\t%d\t%d\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t\n", names[1], c.Clients, c.PGBench.Count, c.PGBench.Errors, c.PGBench.PerSecond, c.PGBench.P50MS, c.PGBench.P95MS, c.PGBench.P99MS)
		fmt.Fprintf(tw, "\t%s\t\t\t\t%.2fx\t%.2fx\t%.2fx\t%.2fx\t\n", ratio, c.Ratios.PerSecond, c.Ratios.P50, c.Ratios.P95, c.Ratios.P99)
	}
	_ = tw.Flush()
	printMemory(w, r.Memory)
	for _, c := range r.Runs {
		fmt.Fprintf(w, "\n%s\n  baseline: %s\n", c.Name, c.Baseline)
		label, sides := "API/pgbench", []string{"API", "pgbench"}
		if len(c.SideNames) == 2 {
			label, sides = c.SideNames[0]+" / "+c.SideNames[1], []string{"first", "second"}
		}
		fmt.Fprintf(w, "  - %d rounds, alternating which side goes first; throughput ratio %s by round: %s; p99 ratio by round: %s\n", c.Rounds, label, ratiosText(c.RoundRatios), ratiosText(c.RoundP99Ratios))
		if cpu := c.MachineCPU; cpu.API.Known && cpu.Baseline.Known {
			fmt.Fprintf(w, "  - the machine's CPUs while each side ran (/proc/stat, warm-up included): %s idle %.0f %%, stolen %.0f %%; %s idle %.0f %%, stolen %.0f %%\n",
				sides[0], 100*cpu.API.Idle, 100*cpu.API.Steal, sides[1], 100*cpu.Baseline.Idle, 100*cpu.Baseline.Steal)
		}
		for _, n := range c.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	printScaling(w, r.Scaling)
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(w, "\n%s\nERRORS: %d run(s) had failures; these numbers are NOT a valid result:\n", strings.Repeat("!", 72), len(r.Errors))
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  ! %s\n", e)
		}
		fmt.Fprintln(w, strings.Repeat("!", 72))
	}
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ScrapeMetrics reads the unlabelled samples of a Prometheus text endpoint
// whose names start with prefix.
func ScrapeMetrics(ctx context.Context, client *http.Client, url, prefix string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, truncate(strings.Join(strings.Fields(string(b)), " "), 400))
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// ratiosText is ratios as the report prints them: "0.74x 1.01x".
func ratiosText(ratios []float64) string {
	out := make([]string, len(ratios))
	for i, x := range ratios {
		out[i] = fmt.Sprintf("%.2fx", x)
	}
	return strings.Join(out, " ")
}
