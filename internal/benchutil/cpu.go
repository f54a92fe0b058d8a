package benchutil

import (
	"os"
	"strconv"
	"strings"
)

// CPUUse is how the machine's CPUs were spent while one side of a
// comparison ran, from the aggregate line of /proc/stat: the share of all
// CPU time that was idle (idle and iowait) and the share the hypervisor took
// (steal). A side that leaves CPUs idle while its requests wait is held by a
// chain of hand-offs between processes, not by CPU. Known is false where
// /proc/stat could not be read.
type CPUUse struct {
	Idle  float64 `json:"idle_share"`
	Steal float64 `json:"steal_share"`
	Known bool    `json:"known"`
}

// cpuTimes are /proc/stat's aggregate counters, or a sum of stretches
// between readings, in clock ticks.
type cpuTimes struct{ idle, steal, total uint64 }

// add counts the stretch between two readings.
func (s *cpuTimes) add(from, to cpuTimes) {
	if to.total <= from.total {
		return
	}
	s.idle += to.idle - from.idle
	s.steal += to.steal - from.steal
	s.total += to.total - from.total
}

// use is the shares of the ticks counted (not known when none were).
func (s cpuTimes) use() CPUUse {
	if s.total == 0 {
		return CPUUse{}
	}
	return CPUUse{Idle: float64(s.idle) / float64(s.total), Steal: float64(s.steal) / float64(s.total), Known: true}
}

// readCPUTimes reads /proc/stat.
func readCPUTimes() (cpuTimes, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	return parseCPUTimes(string(b))
}

// parseCPUTimes reads the aggregate "cpu" line: user nice system idle iowait
// irq softirq steal guest guest_nice. guest and guest_nice are already in
// user and nice, so the total stops at steal.
func parseCPUTimes(stat string) (cpuTimes, bool) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, false
	}
	var v [8]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return cpuTimes{}, false
		}
		v[i] = n
	}
	t := cpuTimes{idle: v[3] + v[4], steal: v[7]}
	for _, n := range v {
		t.total += n
	}
	return t, true
}
