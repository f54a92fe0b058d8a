package benchutil

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// RSSLimitMB is the goal for the API's and every worker's resident set,
// through every suite.
const RSSLimitMB = 200

// MemoryPeak is the peak resident set of the API and of the workers during
// one suite. Zero MB: not measured (no API pid given, or no worker started).
type MemoryPeak struct {
	Suite    string  `json:"suite"`
	APIMB    float64 `json:"api_mb"`
	WorkerMB float64 `json:"worker_mb"` // the largest of the suite's workers
	Workers  int     `json:"workers"`   // worker processes the suite started
	LimitMB  int     `json:"limit_mb"`
	Pass     bool    `json:"pass"`
	// How: "VmHWM" when the kernel's peak was reset at the start of the suite
	// (exact), else "VmRSS sampled every 100ms" (may miss a short spike).
	Method string `json:"method"`
}

// RSSWatch measures per-suite peaks of resident memory of the API process
// and the worker processes the suites start. The kernel keeps each process's
// lifetime peak (VmHWM); writing 5 to /proc/<pid>/clear_refs resets it, so
// the API's peak is reset when a suite begins and read when it ends. A
// worker is started by its suite, so its VmHWM, read just before it is
// stopped, is its peak in that suite. A sampler reading VmRSS every
// interval backs both up where the reset is refused.
type RSSWatch struct {
	apiPID int
	stop   chan struct{}
	done   chan struct{}

	mu        sync.Mutex
	suite     string
	apiKB     int64
	apiExact  bool // the API's VmHWM was reset at the start of the suite
	workers   map[int]bool
	workerKB  int64
	nWorkers  int
	measuring bool
}

// rssSampleEvery is how often VmRSS is sampled.
const rssSampleEvery = 100 * time.Millisecond

// NewRSSWatch starts sampling; apiPID 0: the API is not measured.
func NewRSSWatch(apiPID int) *RSSWatch {
	w := &RSSWatch{apiPID: apiPID, stop: make(chan struct{}), done: make(chan struct{}), workers: map[int]bool{}}
	go w.sample()
	return w
}

func (w *RSSWatch) sample() {
	defer close(w.done)
	t := time.NewTicker(rssSampleEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		w.mu.Lock()
		if w.measuring {
			if w.apiPID > 0 {
				if kb, err := procStatusKB(w.apiPID, "VmRSS"); err == nil {
					w.apiKB = max(w.apiKB, kb)
				}
			}
			for pid := range w.workers {
				if kb, err := procStatusKB(pid, "VmRSS"); err == nil {
					w.workerKB = max(w.workerKB, kb)
				}
			}
		}
		w.mu.Unlock()
	}
}

// Close stops the sampler.
func (w *RSSWatch) Close() {
	close(w.stop)
	<-w.done
}

// BeginSuite starts a suite's window: the API's kernel peak is reset to its
// current resident set.
func (w *RSSWatch) BeginSuite(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.suite, w.apiKB, w.workerKB, w.nWorkers, w.measuring = name, 0, 0, 0, true
	w.apiExact = false
	if w.apiPID > 0 {
		w.apiExact = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", w.apiPID), []byte("5"), 0) == nil
	}
}

// WorkerStarted adds a worker process the suite started.
func (w *RSSWatch) WorkerStarted(pid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.workers[pid] = true
	w.nWorkers++
}

// WorkerStopping takes a worker's lifetime peak; call it before stopping it.
func (w *RSSWatch) WorkerStopping(pid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if kb, err := procStatusKB(pid, "VmHWM"); err == nil {
		w.workerKB = max(w.workerKB, kb)
	}
	delete(w.workers, pid)
}

// EndSuite closes the suite's window and returns its peaks.
func (w *RSSWatch) EndSuite() MemoryPeak {
	w.mu.Lock()
	defer w.mu.Unlock()
	method := "VmRSS sampled every " + rssSampleEvery.String()
	if w.apiExact {
		if kb, err := procStatusKB(w.apiPID, "VmHWM"); err == nil {
			w.apiKB = max(w.apiKB, kb)
			method = "VmHWM (API: reset at the start of the suite; workers: lifetime, each started by the suite)"
		}
	}
	for pid := range w.workers { // still running (a suite that leaves one up)
		if kb, err := procStatusKB(pid, "VmHWM"); err == nil {
			w.workerKB = max(w.workerKB, kb)
		}
	}
	w.measuring = false
	p := MemoryPeak{Suite: w.suite, APIMB: mb(w.apiKB), WorkerMB: mb(w.workerKB), Workers: w.nWorkers, LimitMB: RSSLimitMB, Method: method}
	p.Pass = p.APIMB <= RSSLimitMB && p.WorkerMB <= RSSLimitMB
	return p
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

// procStatusKB reads one "Name:   N kB" field of /proc/<pid>/status.
func procStatusKB(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// printMemory writes the table of peaks by suite.
func printMemory(w io.Writer, peaks []MemoryPeak) {
	if len(peaks) == 0 {
		return
	}
	fmt.Fprintf(w, "\nPeak RSS by suite (goal: API and every worker under %d MB; %s):\n", RSSLimitMB, peaks[0].Method)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "suite\tAPI MB\tworker MB\tworkers\t\t")
	for _, p := range peaks {
		verdict := "PASS"
		if !p.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", p.Suite, mbCell(p.APIMB), mbCell(p.WorkerMB), p.Workers, verdict)
	}
	_ = tw.Flush()
}

func mbCell(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}
