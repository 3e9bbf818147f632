package main

// What the parent prints: each run as it ends, the per-round ratios, and
// the medians with their ranges.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

var workloadNames = map[string]string{
	allThree: "3 steps all at once",
	allOne:   "1 step all at once",
	oneByOne: "3 steps one at a time",
}

func (res result) rate() float64 { return float64(res.Workflows) / res.Elapsed.Seconds() }

// perWorkflow is d per workflow, "-" where it was not measured (d < 0).
func (res result) perWorkflow(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f ms", float64(d)/float64(res.Workflows)/float64(time.Millisecond))
}

func (res result) commitsPerWorkflow() string {
	if res.Commits < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(res.Commits)/float64(res.Workflows))
}

func (res result) walPerWorkflow() string {
	if res.WAL < 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f B", float64(res.WAL)/float64(res.Workflows))
}

func (r *runner) printMeasurement(m measurement) {
	res := m.Result
	lat := ""
	if m.Workload == oneByOne {
		lat = fmt.Sprintf("  p50 %s p99 %s", ms(res.P50), ms(res.P99))
	}
	r.printf("  %-8s %-21s %-18s %8.1f wf/s%s  commits/wf %s  CPU/wf process %s server %s  WAL/wf %s\n",
		m.Driver, workloadNames[m.Workload], m.Variant.Label, res.rate(), lat,
		res.commitsPerWorkflow(), res.perWorkflow(res.ProcCPU), res.perWorkflow(res.ServerCPU), res.walPerWorkflow())
	for _, s := range m.Top {
		r.printf("      %8.1f ms %6d calls %7.3f ms/call %6d rows %7.1f+%.1f blocks/call  planned %d (%.1f ms)  JIT %d functions (%.1f ms)  %s\n",
			s.TotalMs, s.Calls, s.MeanMs, s.Rows, s.BlocksHit, s.BlocksRead, s.Plans, s.PlanMs, s.JITFunctions, s.JITMs, s.Query)
	}
	for _, line := range strings.Split(strings.TrimRight(m.WALRecords, "\n"), "\n") {
		if line != "" {
			r.printf("      %s\n", line)
		}
	}
}

// ratio is this engine's advantage over DBOS in one round: throughput
// over DBOS's all at once, DBOS's p50 latency over ours one at a time
// (above 1: this engine is faster).
func ratio(peer, ours result, workload string) float64 {
	if workload == oneByOne {
		return float64(peer.P50) / float64(ours.P50)
	}
	return ours.rate() / peer.rate()
}

func ratioWhat(workload string) string {
	if workload == oneByOne {
		return "p50 latency DBOS/ours"
	}
	return "wf/s ours/DBOS"
}

// printRatios prints one round's ratios of a cell's variants to DBOS's.
func (r *runner) printRatios(row []measurement) {
	if len(row) == 0 || !row[0].Variant.peer() {
		return
	}
	var parts []string
	for _, m := range row[1:] {
		parts = append(parts, fmt.Sprintf("%s %.2fx", m.Variant.Label, ratio(row[0].Result, m.Result, m.Workload)))
	}
	r.printf("  %-8s %-21s ratio (%s): %s\n", row[0].Driver, workloadNames[row[0].Workload], ratioWhat(row[0].Workload), strings.Join(parts, ", "))
}

// summary prints, per cell and engine, the median of the rounds with the
// range, the largest distance of a round from the median, and the ratios.
func (r *runner) summary() {
	r.printf("\nmedians over %d rounds (range; the farthest round from the median)\n", r.cfg.Rounds)
	for _, driver := range r.cfg.Drivers {
		for _, wl := range r.cfg.Workloads {
			vs := r.cfg.variants(wl)
			for _, v := range vs {
				runs := r.select_(driver, wl, v)
				rates := values(runs, func(res result) float64 { return res.rate() })
				r.printf("  %-8s %-21s %-18s %s wf/s (spread %s)", driver, workloadNames[wl], v.Label, medianRange(rates, "%.1f"), spread(rates))
				if wl == oneByOne {
					r.printf("  p50 %s ms  p99 %s ms",
						medianRange(values(runs, func(res result) float64 { return ms64(res.P50) }), "%.2f"),
						medianRange(values(runs, func(res result) float64 { return ms64(res.P99) }), "%.2f"))
				}
				r.printf("  commits/wf %s  CPU/wf process %s ms server %s ms  WAL/wf %s B\n",
					medianOrDash(runs, func(res result) float64 { return float64(res.Commits) / float64(res.Workflows) }, "%.2f", func(res result) bool { return res.Commits >= 0 }),
					medianOrDash(runs, func(res result) float64 { return ms64(res.ProcCPU) / float64(res.Workflows) }, "%.3f", func(result) bool { return true }),
					medianOrDash(runs, func(res result) float64 { return ms64(res.ServerCPU) / float64(res.Workflows) }, "%.3f", func(res result) bool { return res.ServerCPU >= 0 }),
					medianOrDash(runs, func(res result) float64 { return float64(res.WAL) / float64(res.Workflows) }, "%.0f", func(res result) bool { return res.WAL >= 0 }))
			}
			for _, v := range vs[1:] {
				ratios := r.roundRatios(driver, wl, v)
				r.printf("  %-8s %-21s %-18s ratio (%s) %sx, per round: %s\n", driver, workloadNames[wl], v.Label, ratioWhat(wl),
					medianRange(ratios, "%.2f"), joinf(ratios, "%.2fx"))
			}
		}
	}
}

// The targets of the issue this benchmark holds (docs/benchmarks.md,
// "Against DBOS Transact Go"): 3 steps all at once at least allThreeTarget
// times DBOS-Go's throughput in every round, one at a time at least
// oneByOneTarget times better on p50 latency, and each of this engine's
// rounds within maxSpread of its median (no slow mode).
const (
	allThreeTarget = 3.0
	oneByOneTarget = 2.0
	maxSpread      = 0.15
)

// targets prints, per cell and variant of this engine, whether its rounds
// met the targets, naming the worst round when one did not.
func (r *runner) targets() {
	r.printf("\ntargets: 3 steps all at once >= %.0fx DBOS-Go in every round; one at a time >= %.0fx on p50; this engine's rounds within %.0f%% of their median\n",
		allThreeTarget, oneByOneTarget, 100*maxSpread)
	for _, driver := range r.cfg.Drivers {
		for _, wl := range r.cfg.Workloads {
			for _, v := range r.cfg.variants(wl)[1:] {
				rates := values(r.select_(driver, wl, v), func(res result) float64 { return res.rate() })
				r.printf("  %-8s %-21s %-18s %s\n", driver, workloadNames[wl], v.Label, verdict(wl, r.roundRatios(driver, wl, v), rates))
			}
		}
	}
}

// verdict says whether one variant's rounds met the targets of workload:
// ratios are its per-round ratios to DBOS-Go, rates its per-round
// throughputs.
func verdict(workload string, ratios, rates []float64) string {
	var parts []string
	lowest := func() (float64, int) {
		at := slices.Index(ratios, slices.Min(ratios))
		return ratios[at], at + 1
	}
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "missed"
	}
	if len(ratios) > 0 {
		low, round := lowest()
		switch workload {
		case allThree:
			parts = append(parts, fmt.Sprintf(">= %.0fx in every round: %s (lowest %.2fx, round %d)", allThreeTarget, met(low >= allThreeTarget), low, round))
		case oneByOne:
			m := median(ratios)
			parts = append(parts, fmt.Sprintf(">= %.0fx on p50: %s (median %.2fx; lowest %.2fx, round %d)", oneByOneTarget, met(m >= oneByOneTarget), m, low, round))
		}
	}
	if len(rates) > 0 {
		worst := spreadOf(rates)
		parts = append(parts, fmt.Sprintf("rounds within %.0f%%: %s (%.0f%%)", 100*maxSpread, met(worst <= maxSpread), 100*worst))
	}
	return strings.Join(parts, "; ")
}

// roundRatios are variant v's ratios to DBOS-Go (the cell's first
// variant) in one cell, round by round.
func (r *runner) roundRatios(driver, workload string, v variant) []float64 {
	peers := r.select_(driver, workload, r.cfg.variants(workload)[0])
	ours := r.select_(driver, workload, v)
	var ratios []float64
	for i := range min(len(peers), len(ours)) {
		ratios = append(ratios, ratio(peers[i], ours[i], workload))
	}
	return ratios
}

// select_ is the results of one cell and variant, in round order.
func (r *runner) select_(driver, workload string, v variant) []result {
	var out []result
	for _, m := range r.runs {
		if m.Driver == driver && m.Workload == workload && m.Variant == v {
			out = append(out, m.Result)
		}
	}
	return out
}

func values(rs []result, f func(result) float64) []float64 {
	out := make([]float64, len(rs))
	for i, res := range rs {
		out[i] = f(res)
	}
	return out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianRange prints "median (min-max)".
func medianRange(xs []float64, f string) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf(f+" ("+f+"-"+f+")", median(xs), slices.Min(xs), slices.Max(xs))
}

func medianOrDash(rs []result, f func(result) float64, format string, measured func(result) bool) string {
	var xs []float64
	for _, res := range rs {
		if measured(res) {
			xs = append(xs, f(res))
		}
	}
	if len(xs) == 0 {
		return "-"
	}
	return medianRange(xs, format)
}

// spread is the largest distance of a round from the median, in percent
// of the median (the issue asks every round within 15%).
func spread(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*spreadOf(xs))
}

// spreadOf is the largest distance of xs from their median, as a fraction
// of it.
func spreadOf(xs []float64) float64 {
	m := median(xs)
	worst := 0.0
	for _, x := range xs {
		worst = math.Max(worst, math.Abs(x-m)/m)
	}
	return worst
}

func joinf(xs []float64, f string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(f, x)
	}
	return strings.Join(parts, " ")
}

func ms64(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", ms64(d)) }
