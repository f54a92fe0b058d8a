package benchutil

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A suite's peaks come from the process itself and from a worker it started,
// and the table says PASS or FAIL against the goal.
func TestRSSWatchPeaks(t *testing.T) {
	w := NewRSSWatch(os.Getpid())
	defer w.Close()
	w.BeginSuite("one")
	worker := exec.Command("sleep", "5")
	if err := worker.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	w.WorkerStarted(worker.Process.Pid)
	w.WorkerStopping(worker.Process.Pid)
	_ = worker.Process.Kill()
	_ = worker.Wait()
	p := w.EndSuite()
	if p.Suite != "one" || p.APIMB <= 0 || p.WorkerMB <= 0 || p.Workers != 1 || !p.Pass {
		t.Fatalf("peaks: %+v", p)
	}
	var sb strings.Builder
	printMemory(&sb, []MemoryPeak{p, {Suite: "two", APIMB: RSSLimitMB + 1, LimitMB: RSSLimitMB}})
	if out := sb.String(); !strings.Contains(out, "PASS") || !strings.Contains(out, "FAIL") {
		t.Errorf("table:\n%s", out)
	}
}
