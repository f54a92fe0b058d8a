package benchutil

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// Two readings of /proc/stat give the idle and stolen shares of the ticks
// between them; guest time is already in user time and is not counted twice.
func TestCPUUseFromProcStat(t *testing.T) {
	from, ok := parseCPUTimes("cpu  100 0 50 800 50 0 0 0 40 0\ncpu0 50 0 25 400 25 0 0 0 20 0\n")
	if !ok {
		t.Fatal("first reading not parsed")
	}
	to, ok := parseCPUTimes("cpu  400 0 150 1000 100 10 10 30 90 0\ncpu0 200 0 75 500 50 5 5 15 45 0\n")
	if !ok {
		t.Fatal("second reading not parsed")
	}
	var ticks cpuTimes
	ticks.add(from, to) // 700 ticks: 250 idle or iowait, 30 stolen
	u := ticks.use()
	if !u.Known || u.Idle != 250.0/700 || u.Steal != 30.0/700 {
		t.Errorf("got %+v, want idle 250/700 and steal 30/700", u)
	}
	ticks.add(to, to) // no ticks: nothing changes
	if u = ticks.use(); u.Idle != 250.0/700 {
		t.Errorf("an empty stretch moved the share: %+v", u)
	}
	for _, bad := range []string{"", "intr 1 2 3\n", "cpu 1 2 3\n", "cpu a b c d e f g h\n"} {
		if _, ok := parseCPUTimes(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// Alternate reads the machine's counters around each side's turn, and the
// report prints both sides' shares under the run.
func TestAlternateRecordsTheMachinesCPUs(t *testing.T) {
	side := func(context.Context, int) ([]Sample, int, error) {
		start := time.Now()
		time.Sleep(50 * time.Millisecond) // a few clock ticks on every CPU
		return []Sample{{Start: start, End: time.Now()}}, 0, nil
	}
	res, err := Alternate(context.Background(), 2, side, side)
	if err != nil {
		t.Fatal(err)
	}
	for name, u := range map[string]CPUUse{"API": res.APICPU, "baseline": res.BaselineCPU} {
		if !u.Known || u.Idle < 0 || u.Idle > 1 || u.Steal < 0 || u.Idle+u.Steal > 1 {
			t.Errorf("%s side: %+v", name, u)
		}
	}

	c := NewComparison("GET /v1/things", "pgbench", 8, res)
	c.MachineCPU.API = CPUUse{Idle: 0.214, Steal: 0.004, Known: true}
	c.MachineCPU.Baseline = CPUUse{Idle: 0.03, Steal: 0.011, Known: true}
	var b bytes.Buffer
	(&Report{Runs: []Comparison{c}}).Print(&b)
	want := "the machine's CPUs while each side ran (/proc/stat, warm-up included): API idle 21 %, stolen 0 %; pgbench idle 3 %, stolen 1 %"
	if !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
}
