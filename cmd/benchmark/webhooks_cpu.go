package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU is the user+system CPU time a process has used so far (0 when it is gone).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command may hold spaces: the fields after it start past the last ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick
}

// selfCPU is the benchmark process's own CPU time: the load clients and the receiver.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// apiPID finds the API that scripts/bench.sh started: a sibling of this process
// (same parent) running `valuecase api`; 0 when there is none (an API started elsewhere).
func apiPID() int {
	parent := os.Getppid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.HasSuffix(string(cmd), "valuecase\x00api\x00") {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 1 && f[1] == strconv.Itoa(parent) {
			return pid
		}
	}
	return 0
}

// cpuSample is the CPU time used so far by each process a webhook round runs on.
type cpuSample struct {
	api, worker, bench time.Duration
	backends           map[int]time.Duration // PostgreSQL backends of the benchmark database
}

// cpuUse is what the processes used between two samples.
type cpuUse struct{ api, worker, postgres, bench time.Duration }

func (u cpuUse) total() time.Duration { return u.api + u.worker + u.postgres + u.bench }

func (u *cpuUse) add(o cpuUse) {
	u.api, u.worker, u.postgres, u.bench = u.api+o.api, u.worker+o.worker, u.postgres+o.postgres, u.bench+o.bench
}

// sampleCPU reads the CPU time of the API, the worker, this process and every
// backend of the benchmark database (PostgreSQL's shared background processes,
// the WAL writer among them, are not counted).
func (e *env) sampleCPU(ctx context.Context, api, worker int) cpuSample {
	s := cpuSample{api: procCPU(api), worker: procCPU(worker), bench: selfCPU(), backends: map[int]time.Duration{}}
	rows, err := e.pool.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'")
	if err != nil {
		return s
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			s.backends[pid] = procCPU(pid)
		}
	}
	return s
}

// since is the CPU used from a to b; a backend that connected in between counts whole.
func (b cpuSample) since(a cpuSample) cpuUse {
	u := cpuUse{api: b.api - a.api, worker: b.worker - a.worker, bench: b.bench - a.bench}
	for pid, t := range b.backends {
		u.postgres += t - a.backends[pid]
	}
	return u
}

// cpuNote reports the CPU time per committed event of the API rounds and the
// event rate that the machine's cores would allow at that cost.
func cpuNote(u cpuUse, events, subs int) string {
	if events == 0 {
		return "CPU per event: no events"
	}
	per := func(d time.Duration) string {
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000/float64(events))
	}
	cores := float64(runtime.NumCPU())
	rate := cores / (u.total().Seconds() / float64(events))
	return fmt.Sprintf("CPU per committed event (%d deliveries each), API rounds: API %s, worker %s, PostgreSQL backends %s, benchmark (load clients and receiver) %s; total %s: %.0f CPUs allow at most ~%.0f events/s = ~%.0f deliveries/s with nothing else running (/proc/<pid>/stat; WAL writer and other PostgreSQL background work not counted)",
		subs, per(u.api), per(u.worker), per(u.postgres), per(u.bench), per(u.total()), cores, rate, rate*float64(subs))
}
