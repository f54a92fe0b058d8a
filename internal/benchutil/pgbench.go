package benchutil

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/valuecase/valuecase/db"
)

// PGBench is one pgbench run of a custom script in prepared mode (pgx
// prepares its statements too), with a per-transaction log so its latencies
// are summarized exactly like the HTTP ones.
type PGBench struct {
	Path    string // the pgbench binary
	ConnURL string // a postgres:// URL; pgx-only parameters (pool_*) are dropped
	Script  string // path of the script file
	Clients int
	Threads int
	// Warmup is the number of first transactions of each client not measured
	// (the first one prepares the statements), as HTTPLoad.Warmup.
	Warmup int
	// Exactly one of Transactions (per client, warm-up included: -t) and
	// Duration (whole seconds, warm-up included: -T) is set.
	Transactions int
	Duration     time.Duration
	Vars         map[string]string // -D NAME=VALUE
	// LogPrefix is where the per-transaction logs go (LogPrefix.PID[.THREAD]);
	// stdout and stderr go to LogPrefix.out.
	LogPrefix string
}

// PGBenchResult is what a pgbench run measured.
type PGBenchResult struct {
	Samples []Sample
	Errors  int
	// Processed counts transactions in the logs, warm-up included.
	Processed int
	Output    string
}

// Summary summarizes the result.
func (r *PGBenchResult) Summary() Summary { return Summarize(r.Samples, r.Errors) }

// Args is the pgbench command line (without the binary).
func (p PGBench) Args() ([]string, error) {
	if (p.Transactions > 0) == (p.Duration > 0) {
		return nil, errors.New("pgbench needs exactly one of Transactions and Duration")
	}
	threads := min(max(p.Threads, 1), p.Clients)
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(p.Clients), "-j", strconv.Itoa(threads),
		"-f", p.Script, "-l", "--log-prefix", p.LogPrefix}
	if p.Transactions > 0 {
		args = append(args, "-t", strconv.Itoa(p.Transactions))
	} else {
		args = append(args, "-T", strconv.Itoa(max(1, int(math.Ceil(p.Duration.Seconds())))))
	}
	names := make([]string, 0, len(p.Vars))
	for k := range p.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "-D", k+"="+p.Vars[k])
	}
	args = append(args, "-D", nullVar+"="+nullValue) // Null's value
	conn, err := LibpqURL(p.ConnURL)
	if err != nil {
		return nil, err
	}
	return append(args, conn), nil
}

// Run runs pgbench and reads its per-transaction logs.
func (p PGBench) Run(ctx context.Context) (*PGBenchResult, error) {
	args, err := p.Args()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p.LogPrefix), 0o755); err != nil {
		return nil, err
	}
	old, _ := filepath.Glob(p.LogPrefix + ".*")
	for _, f := range old {
		_ = os.Remove(f)
	}
	cmd := exec.CommandContext(ctx, p.Path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	res := &PGBenchResult{Output: out.String()}
	_ = os.WriteFile(p.LogPrefix+".out", out.Bytes(), 0o644)
	if err := res.readLogs(p.LogPrefix, p.Warmup); err != nil {
		return res, err
	}
	if runErr != nil {
		return res, fmt.Errorf("pgbench failed (%w); its output (also in %s.out):\n%s", runErr, p.LogPrefix, tail(res.Output, 25))
	}
	if p.Transactions > 0 && res.Processed+res.Errors != p.Clients*p.Transactions {
		return res, fmt.Errorf("pgbench logged %d transactions, want %d; see %s.out", res.Processed+res.Errors, p.Clients*p.Transactions, p.LogPrefix)
	}
	return res, nil
}

// readLogs parses pgbench's per-transaction log lines:
// client_id transaction_no time script_no time_epoch time_us [...],
// where time is the latency in microseconds (or "failed"/"skipped") and
// time_epoch.time_us the moment the transaction ended.
func (r *PGBenchResult) readLogs(prefix string, warmup int) error {
	files, err := filepath.Glob(prefix + ".[0-9]*")
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("pgbench wrote no transaction log (%s.*)", prefix)
	}
	for _, f := range files {
		if err := r.readLog(f, warmup); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

func (r *PGBenchResult) readLog(path string, warmup int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			return fmt.Errorf("unexpected log line %q", sc.Text())
		}
		txNo, err1 := strconv.Atoi(fields[1])
		lat, err2 := strconv.ParseInt(fields[2], 10, 64)
		sec, err3 := strconv.ParseInt(fields[4], 10, 64)
		usec, err4 := strconv.ParseInt(fields[5], 10, 64)
		if err1 != nil || err3 != nil || err4 != nil {
			return fmt.Errorf("unexpected log line %q", sc.Text())
		}
		if err2 != nil { // "failed" or "skipped"
			r.Errors++
			continue
		}
		r.Processed++
		if txNo <= warmup {
			continue
		}
		end := time.Unix(sec, usec*1000)
		r.Samples = append(r.Samples, Sample{Start: end.Add(-time.Duration(lat) * time.Microsecond), End: end})
	}
	return sc.Err()
}

// pgxOnlyParams are connection-string parameters pgx understands and libpq rejects.
var pgxOnlyParams = []string{"pool_", "statement_cache_capacity", "description_cache_capacity", "default_query_exec_mode"}

// LibpqURL drops the pgx-only parameters of a postgres:// URL and starts the session with the
// service's settings (db.SessionSettings), so that pgbench runs the SQL as the service does.
func LibpqURL(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	q := u.Query()
	for k := range q {
		for _, p := range pgxOnlyParams {
			if strings.HasPrefix(k, p) {
				q.Del(k)
			}
		}
	}
	// The service's session settings, as startup options (libpq takes no bare setting names).
	opts := q.Get("options")
	for _, k := range slices.Sorted(maps.Keys(db.SessionSettings)) {
		v := db.SessionSettings[k]
		if q.Has(k) {
			v = q.Get(k)
			q.Del(k)
		}
		opts = strings.TrimSpace(opts + " -c " + k + "=" + v)
	}
	q.Set("options", opts)
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // libpq reads no "+" as a space
	return u.String(), nil
}

// PGBenchVersion is `pgbench --version`, or an error naming the package.
func PGBenchVersion(ctx context.Context, path string) (string, error) {
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version failed (%w): %s; install pgbench (Debian: apt-get install postgresql-contrib)", path, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// FindPGBench is the pgbench binary called name: a path as given, else from
// PATH, else the newest of Debian's versioned ones.
func FindPGBench(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	// Debian keeps the versioned binaries here.
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		slices.Sort(matches)
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("%s not found; install it (Debian: apt-get install postgresql-contrib) or set PGBENCH", name)
}
