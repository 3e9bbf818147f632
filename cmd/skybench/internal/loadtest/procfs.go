package loadtest

// Probes of the machine from /proc: its CPU, its load average, and the busy
// and idle CPU time of all its cores (for the machine CPU per workflow).

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// machine describes the machine the load run ran on.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d cores (%s), %s/%s, %s, %s", runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH, runtime.Version(), loadAverage())
}

// loadAverage is the 1-minute load average: on a shared machine, figures
// taken under load are not comparable with figures taken idle.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "load average unknown"
	}
	return "load average " + f[0]
}

// cpuTimes reads the machine's busy and idle CPU time (all cores) from
// /proc/stat, in clock ticks (USER_HZ, 100 per second on Linux); ok is false
// where there is no /proc/stat.
func cpuTimes() (busy, idle int64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	// user nice system idle iowait irq softirq steal
	for i, s := range f[1:9] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i == 3 || i == 4 {
			idle += n
		} else {
			busy += n
		}
	}
	return busy, idle, true
}
