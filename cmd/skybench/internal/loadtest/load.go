// Package loadtest is the load run of the durable engine (`skybench load`,
// `make bench`): it prints, never asserts, the figures docs/benchmarks.md
// reports: throughput and costs of 1- and 3-step workflows on PostgreSQL and
// SQLite with 1 and 8 pollers, the cost of a replayed step and of a step
// running its own INSERT, an empty poll, claim latency with 1,000 and 100,000
// waiting runs (with the claim's EXPLAIN plan), and pgbench's single-row-
// insert commit rate of the same server, then compares them with the
// targets. The only check it makes is that every run it started ended done.
//
// Every measurement gets a fresh database of its own (databases.go), dropped
// when it ends. Round trips and commits are counted on the wire by a proxy
// (wire.go); engine statements come from the engine's Options.OnStatement.
//
// It may import the engine's Go API (runtime/durable, runtime/db,
// runtime/codec, runtime/task), pgx for the measurements the engine does not
// make (pgbench's rate, EXPLAIN) and the OpenTelemetry SDK; never compiler/
// or stdlib/.
package loadtest

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// Config shapes a load run. Default gives the run docs/benchmarks.md
// records.
type Config struct {
	// ServerURL is the PostgreSQL server (a postgres:// URL); each
	// measurement creates its own database there and drops it.
	ServerURL string
	// Drivers are the stores measured: "postgres", "sqlite".
	Drivers []string
	// Steps and Pollers span the throughput configurations (workflows of
	// each number of steps drained by each number of concurrent pollers).
	Steps, Pollers []int
	// Rounds is how many times the compared configuration (PostgreSQL, the
	// most steps, the most pollers) runs in each of Modes, alternating with
	// pgbench: pgbench, mode 1, mode 2, pgbench, ... 0: it runs once per
	// mode and pgbench does not run.
	Rounds int
	// Modes are the MaxRuns of the compared configuration's pollers: 1 is
	// Poll, more is PollWith (completion and next claim in one statement).
	// The other configurations use Poll.
	Modes []int
	// Runs is the number of timed workflows per throughput configuration;
	// WarmRuns the warm-up workflows per poller before it; CountedRuns the
	// workflows of the pass counted through the proxy after it.
	Runs, WarmRuns, CountedRuns int
	// PgbenchSeconds is how long each pgbench run lasts.
	PgbenchSeconds int
	// Parts are the measurements made per driver: "throughput", "txstep",
	// "replay", "claim", "telemetry".
	Parts []string
	// Waiting are the numbers of waiting runs of the claim measurements.
	Waiting []int
	// Out receives the figures; Log warnings (a database left behind).
	Out, Log io.Writer
}

// AllParts are the measurements of a full load run.
var AllParts = []string{"throughput", "txstep", "replay", "claim", "telemetry"}

// Default is the full load run (about 4 minutes on 2 cores, the telemetry part included).
func Default() Config {
	return Config{
		ServerURL:      ServerURL(),
		Drivers:        []string{"postgres", "sqlite"},
		Steps:          []int{1, 3},
		Pollers:        []int{1, 8},
		Rounds:         5,
		Modes:          []int{1, 100},
		Runs:           1000,
		WarmRuns:       200,
		CountedRuns:    200,
		PgbenchSeconds: 5,
		Parts:          AllParts,
		Waiting:        []int{1000, 100000},
	}
}

// Throughput is the outcome of one throughput configuration.
type Throughput struct {
	Driver         string
	Steps, Pollers int
	MaxRuns        int // the pollers' PollWith MaxRuns (1: Poll)
	// Started and Done count every run of the configuration's database
	// (warm-up, timed and counted); the run fails unless they are equal.
	Started, Done   int64
	WorkflowsPerSec float64
	// Counted is what the counting pass of CountedRuns workflows used, and
	// PerWorkflow the same per workflow.
	Counted     Counts
	PerWorkflow Costs
	P50, P99    time.Duration // fresh step latency
	// CPU is the machine's busy CPU time (all processes, all cores) per
	// workflow during the timed pass, and Busy the share of the cores it
	// kept busy; CPU is 0 where /proc/stat is missing.
	CPU  time.Duration
	Busy float64
}

// Report gathers every figure of a run.
type Report struct {
	Pgbench    []PgbenchResult // around each round of the compared configuration
	PgbenchErr error
	Throughput []Throughput
	Replayed   map[string]Costs // per replayed step, by driver
	TxStep     map[string]Costs // per fresh step with its own INSERT, by driver
	Claims     []Claim
	Telemetry  []TelemetryCost
	// Failed names the measurements that failed (their errors were
	// printed).
	Failed []string
}

func (r *Report) find(driver string, steps, pollers int) (Throughput, bool) {
	for _, t := range r.Throughput {
		if t.Driver == driver && t.Steps == steps && t.Pollers == pollers && t.MaxRuns == 1 {
			return t, true
		}
	}
	return Throughput{}, false
}

// runner is one load run.
type runner struct {
	cfg Config
	rep *Report
}

func (r *runner) printf(format string, args ...any) { fmt.Fprintf(r.cfg.Out, format, args...) }

// Run makes the measurements cfg asks for, printing each figure to cfg.Out
// as it comes, then the comparison with the targets. It returns the report
// and an error when a measurement failed (the others still ran) or ctx
// ended.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, rep: &Report{Replayed: map[string]Costs{}, TxStep: map[string]Costs{}}}
	r.printf("load run: %d workflows per configuration; machine: %s\n", cfg.Runs, machine())
	measure := func(name string, f func() error) {
		if ctx.Err() != nil {
			return
		}
		if err := f(); err != nil {
			r.rep.Failed = append(r.rep.Failed, name)
			r.printf("%s: FAILED: %v\n", name, err)
		}
	}
	pgbench := func(name string) {
		measure(name, func() error {
			res, err := r.runPgbench(ctx, cfg.PgbenchSeconds)
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				r.rep.PgbenchErr = err
				r.printf("%s: NOT MEASURED: %v\n", name, err)
				return nil
			}
			r.rep.Pgbench = append(r.rep.Pgbench, res)
			r.printf("server: %s\n", res.Server)
			r.printf("%s: %.0f single-row INSERT commits/s  [%s]\n", name, res.TPS, res.Command)
			return nil
		})
	}
	throughputRun := func(driver string, steps, pollers, maxRuns int) {
		name := fmt.Sprintf("throughput/%s/%dsteps/%dpollers", driver, steps, pollers)
		mode := ""
		if maxRuns > 1 {
			name += fmt.Sprintf("/maxruns%d", maxRuns)
			mode = fmt.Sprintf(" (PollWith MaxRuns %d)", maxRuns)
		}
		measure(name, func() error {
			t, err := r.measureThroughput(ctx, driver, steps, pollers, maxRuns, nil)
			if err != nil {
				return err
			}
			r.rep.Throughput = append(r.rep.Throughput, t)
			r.printf("%-8s %d-step %d poller(s)%s: %7.1f workflows/s %8.1f steps/s  step latency p50 %-9s p99 %-9s machine CPU %-8s per workflow (cores %2.0f%% busy)  per workflow: %s\n",
				driver, steps, pollers, mode, t.WorkflowsPerSec, t.WorkflowsPerSec*float64(steps), t.P50.Round(time.Microsecond), t.P99.Round(time.Microsecond),
				t.CPU.Round(time.Microsecond), 100*t.Busy, t.PerWorkflow.format(driver))
			return nil
		})
	}
	has := func(part string) bool { return slices.Contains(cfg.Parts, part) }

	// The configuration compared with pgbench alternates with it, so both
	// see the same machine (which may be shared, its disk throttled):
	// pgbench, Poll run, PollWith run, pgbench, ..., pgbench.
	compared := has("throughput") && slices.Contains(cfg.Drivers, "postgres")
	cSteps, cPollers := slices.Max(cfg.Steps), slices.Max(cfg.Pollers)
	if compared {
		if cfg.Rounds > 0 {
			pgbench("pgbench/0")
		}
		for i := 1; i <= max(cfg.Rounds, 1); i++ {
			for _, maxRuns := range cfg.Modes {
				throughputRun("postgres", cSteps, cPollers, maxRuns)
			}
			if cfg.Rounds > 0 {
				pgbench(fmt.Sprintf("pgbench/%d", i))
			}
		}
	}
	for _, driver := range cfg.Drivers {
		if has("throughput") {
			for _, steps := range cfg.Steps {
				for _, pollers := range cfg.Pollers {
					if compared && driver == "postgres" && steps == cSteps && pollers == cPollers && slices.Contains(cfg.Modes, 1) {
						continue // measured first, alternating with pgbench
					}
					throughputRun(driver, steps, pollers, 1)
				}
			}
		}
		if has("txstep") {
			measure("txstep/"+driver, func() error {
				c, err := r.measureTxStep(ctx, driver)
				if err != nil {
					return err
				}
				r.rep.TxStep[driver] = c
				r.printf("%-8s per fresh step running one INSERT of its own in the step's transaction: %s\n", driver, c.format(driver))
				return nil
			})
		}
		if has("replay") {
			measure("replay/"+driver, func() error {
				c, err := r.measureReplay(ctx, driver)
				if err != nil {
					return err
				}
				r.rep.Replayed[driver] = c
				r.printf("%-8s per replayed step: %s\n", driver, c.format(driver))
				return nil
			})
		}
		if has("claim") {
			for _, waiting := range cfg.Waiting {
				measure(fmt.Sprintf("claim/%s/%dwaiting", driver, waiting), func() error {
					f, err := r.measureClaim(ctx, driver, waiting)
					if err != nil {
						return err
					}
					r.rep.Claims = append(r.rep.Claims, f)
					r.printf("%-8s %6d waiting runs: claim latency p50 %-9s p99 %-9s | empty poll %-9s (%s)\n",
						driver, waiting, f.ClaimP50.Round(time.Microsecond), f.ClaimP99.Round(time.Microsecond),
						f.EmptyPoll.Round(time.Microsecond), f.EmptyCost.format(driver))
					r.printf("claim query plan (%s, %d waiting runs, one due):\n%s\n", driver, waiting, indent(f.Plan))
					r.printf("claim query plan (%s, %d waiting runs, none due: the empty poll):\n%s\n", driver, waiting, indent(f.EmptyPlan))
					return nil
				})
			}
		}
	}
	if has("telemetry") {
		for _, driver := range cfg.Drivers {
			measure("telemetry/"+driver, func() error { return r.measureTelemetry(ctx, driver) })
		}
	}
	if err := ctx.Err(); err != nil {
		return r.rep, fmt.Errorf("load run stopped: %w", err)
	}
	r.summary()
	r.printf("load run finished; %s\n", loadAverage())
	if len(r.rep.Failed) > 0 {
		return r.rep, fmt.Errorf("%d measurement(s) failed: %s", len(r.rep.Failed), strings.Join(r.rep.Failed, ", "))
	}
	return r.rep, nil
}

// check rejects a Config that would measure nothing or divide by zero.
func (cfg Config) check() error {
	for _, d := range cfg.Drivers {
		if d != "postgres" && d != "sqlite" {
			return fmt.Errorf("unknown driver %q (postgres, sqlite)", d)
		}
	}
	for _, p := range cfg.Parts {
		if !slices.Contains(AllParts, p) {
			return fmt.Errorf("unknown part %q (%s)", p, strings.Join(AllParts, ", "))
		}
	}
	positive := func(what string, ns ...int) error {
		for _, n := range ns {
			if n < 1 {
				return fmt.Errorf("%s must be at least 1, not %d", what, n)
			}
		}
		return nil
	}
	switch {
	case len(cfg.Drivers) == 0:
		return fmt.Errorf("no driver to measure")
	case slices.Contains(cfg.Parts, "throughput") && (len(cfg.Steps) == 0 || len(cfg.Pollers) == 0 || len(cfg.Modes) == 0):
		return fmt.Errorf("throughput needs steps, pollers and modes")
	case cfg.Rounds < 0:
		return fmt.Errorf("rounds must be 0 or more, not %d", cfg.Rounds)
	}
	if err := positive("steps", cfg.Steps...); err != nil {
		return err
	}
	if err := positive("pollers", cfg.Pollers...); err != nil {
		return err
	}
	if err := positive("a mode's MaxRuns", cfg.Modes...); err != nil {
		return err
	}
	if err := positive("waiting runs", cfg.Waiting...); err != nil {
		return err
	}
	if err := positive("runs, warm-up runs, counted runs", cfg.Runs, cfg.WarmRuns, cfg.CountedRuns); err != nil {
		return err
	}
	if cfg.Rounds > 0 {
		return positive("pgbench seconds", cfg.PgbenchSeconds)
	}
	return nil
}

// measureThroughput drains Runs fresh workflows of steps steps with pollers
// concurrent pollers on a fresh database (timed pass, direct connections),
// then CountedRuns more through the counting proxy. With a sink, every
// engine reports its spans and metrics there (the telemetry part).
//
// Before the timed pass, WarmRuns workflows per poller let every pooled
// connection prepare, and plan past its first five custom plans, the single
// statements and the batched ones of the sizes the load makes (with 50, the
// rarer batch sizes were still being planned at every execution in the
// timed pass: about 0.1 ms of server time per workflow).
func (r *runner) measureThroughput(ctx context.Context, driver string, steps, pollers, maxRuns int, sink *otelSink) (Throughput, error) {
	var cl cleanups
	defer cl.run()
	bd, err := r.openBenchDB(ctx, &cl, driver, pollers+2)
	if err != nil {
		return Throughput{}, err
	}
	bd.otel = sink
	lat := &latencies{}
	def := stepsWorkflow("bench.steps", steps, false, lat)
	defs := []durable.Workflow{def.Erase()}
	starter := bd.engine("starter")
	// The pollers are goroutines of one worker process: they share one
	// Engine, whose group commit batches their journal writes.
	direct, counting := shared(bd.engine("worker")), shared(bd.countingEngine("worker"))
	var started int64
	start := func(prefix string, n int) error {
		started += int64(n)
		return startRuns(ctx, starter, def, prefix, n)
	}
	drainPass := func(newEngine func(string) *durable.Engine) (time.Duration, error) {
		return drainWith(ctx, newEngine, defs, pollers, maxRuns)
	}
	// Warm up: every pooled connection prepares the engine's statements.
	if err := start("warm", r.cfg.WarmRuns*pollers); err != nil {
		return Throughput{}, err
	}
	if _, err := drainPass(direct); err != nil {
		return Throughput{}, err
	}
	if _, err := drainPass(counting); err != nil {
		return Throughput{}, err
	}
	if driver == "postgres" {
		// Measure the steady state, where autovacuum has analyzed the
		// tables (it does within a minute of a new table's first writes):
		// without statistics, the plans a connection caches in a new
		// table's first seconds may scan the table (docs/benchmarks.md).
		// ANALYZE makes every connection plan its statements again, so
		// warm up once more.
		if _, err := bd.d.Exec(ctx, "ANALYZE"); err != nil {
			return Throughput{}, err
		}
		if err := start("rewarm", r.cfg.WarmRuns*pollers/4); err != nil {
			return Throughput{}, err
		}
		if _, err := drainPass(direct); err != nil {
			return Throughput{}, err
		}
	}
	lat.reset()
	if err := start("run", r.cfg.Runs); err != nil {
		return Throughput{}, err
	}
	busy0, idle0, _ := cpuTimes()
	elapsed, err := drainPass(direct)
	if err != nil {
		return Throughput{}, err
	}
	busy1, idle1, cpuOK := cpuTimes()
	p50, p99 := lat.quantile(0.50), lat.quantile(0.99)
	if err := start("counted", r.cfg.CountedRuns); err != nil {
		return Throughput{}, err
	}
	before := bd.counters()
	if _, err := drainPass(counting); err != nil {
		return Throughput{}, err
	}
	used := bd.counters().sub(before)
	done, err := bd.checkAllDone(ctx, started)
	if err != nil {
		return Throughput{}, err
	}
	t := Throughput{
		Driver: driver, Steps: steps, Pollers: pollers, MaxRuns: maxRuns,
		Started: started, Done: done,
		WorkflowsPerSec: float64(r.cfg.Runs) / elapsed.Seconds(),
		Counted:         used,
		PerWorkflow:     used.per(r.cfg.CountedRuns),
		P50:             p50,
		P99:             p99,
	}
	if cpuOK && busy1+idle1 > busy0+idle0 {
		t.CPU = time.Duration(busy1-busy0) * 10 * time.Millisecond / time.Duration(r.cfg.Runs)
		t.Busy = float64(busy1-busy0) / float64(busy1+idle1-busy0-idle0)
	}
	return t, nil
}

// replayRuns is the number of runs resumed per measurement of a replayed
// step.
const replayRuns = 300

// measureReplay resumes runs parked on a signal after 0 and after 3 steps;
// the difference, per step, is the cost of a replayed step.
func (r *runner) measureReplay(ctx context.Context, driver string) (Costs, error) {
	const n = replayRuns
	var cl cleanups
	defer cl.run()
	bd, err := r.openBenchDB(ctx, &cl, driver, 3)
	if err != nil {
		return Costs{}, err
	}
	e := bd.countingEngine("replayer")
	resume := func(steps int) (Costs, error) {
		def := stepsWorkflow(fmt.Sprintf("bench.replay%d", steps), steps, true, &latencies{})
		defs := []durable.Workflow{def.Erase()}
		prefix := fmt.Sprintf("replay%d", steps)
		if err := startRuns(ctx, e, def, prefix, n); err != nil {
			return Costs{}, err
		}
		if _, err := drain(ctx, bd.countingEngine, defs, 1); err != nil { // runs the steps, parks on the signal
			return Costs{}, err
		}
		for i := 0; i < n; i++ {
			if err := e.Signal(ctx, fmt.Sprintf("%s-%d", prefix, i), "go", `"!"`); err != nil {
				return Costs{}, err
			}
		}
		before := bd.counters()
		if _, err := drain(ctx, bd.countingEngine, defs, 1); err != nil { // replays the steps, consumes the signal, completes
			return Costs{}, err
		}
		return bd.counters().sub(before).per(n), nil
	}
	without, err := resume(0)
	if err != nil {
		return Costs{}, err
	}
	with, err := resume(3)
	if err != nil {
		return Costs{}, err
	}
	if _, err := bd.checkAllDone(ctx, 2*n); err != nil {
		return Costs{}, err
	}
	return with.minus(without).scale(1.0 / 3), nil
}

// measureTxStep measures a step whose task runs one INSERT on the run's
// database (joining the step's transaction, as Sky's Durable.conn does):
// (3-step workflow - 1-step workflow) / 2, through the counting proxy.
func (r *runner) measureTxStep(ctx context.Context, driver string) (Costs, error) {
	n := r.cfg.CountedRuns
	var cl cleanups
	defer cl.run()
	bd, err := r.openBenchDB(ctx, &cl, driver, 3)
	if err != nil {
		return Costs{}, err
	}
	if _, err := bd.d.Exec(ctx, `CREATE TABLE bench_effects (run_id TEXT NOT NULL, step TEXT NOT NULL)`); err != nil {
		return Costs{}, err
	}
	e := bd.countingEngine("tx")
	perWorkflow := func(steps int) (Costs, error) {
		name := fmt.Sprintf("bench.tx%d", steps)
		def := durable.Register(name, codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
			t := task.Succeed(in)
			for i := 1; i <= steps; i++ {
				id := "t" + strconv.Itoa(i)
				t = task.AndThen(t, func(string) task.Task[string] {
					return durable.Step(c, codec.String, id, task.From(func(ctx context.Context) (string, error) {
						_, err := c.DB().Exec(ctx, `INSERT INTO bench_effects (run_id, step) VALUES (?, ?)`, c.RunID(), id)
						return id, err
					}))
				})
			}
			return t
		})
		defs := []durable.Workflow{def.Erase()}
		if err := startRuns(ctx, e, def, name+"-warm", 5); err != nil {
			return Costs{}, err
		}
		if _, err := drain(ctx, bd.countingEngine, defs, 1); err != nil {
			return Costs{}, err
		}
		if err := startRuns(ctx, e, def, name, n); err != nil {
			return Costs{}, err
		}
		before := bd.counters()
		if _, err := drain(ctx, bd.countingEngine, defs, 1); err != nil {
			return Costs{}, err
		}
		return bd.counters().sub(before).per(n), nil
	}
	one, err := perWorkflow(1)
	if err != nil {
		return Costs{}, err
	}
	three, err := perWorkflow(3)
	if err != nil {
		return Costs{}, err
	}
	if _, err := bd.checkAllDone(ctx, int64(2*(5+n))); err != nil {
		return Costs{}, err
	}
	return three.minus(one).scale(0.5), nil
}

// summary compares the figures with the targets of the engine issue.
func (r *runner) summary() {
	rep := r.rep
	r.printf("targets:\n")
	for _, driver := range r.cfg.Drivers {
		one, ok1 := rep.find(driver, 1, 1)
		three, ok3 := rep.find(driver, 3, 1)
		if ok1 && ok3 {
			fresh := three.PerWorkflow.minus(one.PerWorkflow).scale(0.5)
			r.printf("  %-8s fresh step (3-step minus 1-step workflow, /2), target 1 round trip + 1 commit: %s\n", driver, fresh.format(driver))
		}
		if c, ok := rep.Replayed[driver]; ok {
			r.printf("  %-8s replayed step, target 0 queries: %s\n", driver, c.format(driver))
		}
		// The fewest and the most waiting runs measured (1,000 and 100,000
		// in the full run).
		var small, large *Claim
		for i := range rep.Claims {
			c := &rep.Claims[i]
			if c.Driver != driver {
				continue
			}
			if small == nil || c.Waiting < small.Waiting {
				small = c
			}
			if large == nil || c.Waiting > large.Waiting {
				large = c
			}
		}
		if small != nil && large != nil && small != large && small.ClaimP50 > 0 {
			ratio := float64(large.ClaimP50) / float64(small.ClaimP50)
			r.printf("  %-8s claim latency p50 at %s / at %s waiting runs = %s / %s = %.2fx (target <= 2x): %s\n",
				driver, thousands(large.Waiting), thousands(small.Waiting), large.ClaimP50.Round(time.Microsecond), small.ClaimP50.Round(time.Microsecond), ratio, verdict(ratio <= 2))
			if driver == "postgres" {
				r.printf("  %-8s claim execution time in the server (EXPLAIN ANALYZE) at %s / %s waiting runs: one due %s / %s; none due (empty poll) %s / %s\n",
					driver, thousands(small.Waiting), thousands(large.Waiting), executionTime(small.Plan), executionTime(large.Plan), executionTime(small.EmptyPlan), executionTime(large.EmptyPlan))
			}
		}
	}
	r.comparePgbench()
}

// comparePgbench compares each round of the compared configuration (3-step,
// 8-poller PostgreSQL in the full run) with the mean of the pgbench runs
// just before and after it, and prints the median of the rounds.
//
// The bound is the pgbench commit rate divided by the commits a workflow
// needs when each claim, each step and the completion commits on its own:
// steps + 2 (5 for 3 steps). The engine commits less (the last step's row
// rides with the completion; group commit shares commits between runs):
// that saving is what lets it beat the bound, as the target invites. The
// share against the engine's own measured commits is printed too.
func (r *runner) comparePgbench() {
	rep := r.rep
	if !slices.Contains(r.cfg.Drivers, "postgres") || !slices.Contains(r.cfg.Parts, "throughput") {
		return
	}
	steps, pollers := slices.Max(r.cfg.Steps), slices.Max(r.cfg.Pollers)
	for _, maxRuns := range r.cfg.Modes {
		mode := "Poll"
		if maxRuns > 1 {
			mode = fmt.Sprintf("PollWith MaxRuns %d", maxRuns)
		}
		var rounds []Throughput
		for _, t := range rep.Throughput {
			if t.Driver == "postgres" && t.Steps == steps && t.Pollers == pollers && t.MaxRuns == maxRuns {
				rounds = append(rounds, t)
			}
		}
		if len(rounds) == 0 || len(rep.Pgbench) < len(rounds)+1 {
			why := fmt.Sprint("pgbench: ", rep.PgbenchErr)
			if r.cfg.Rounds == 0 {
				why = "-rounds 0"
			}
			r.printf("  postgres %d-step, %d pollers (%s) vs pgbench: not measured (%s)\n", steps, pollers, mode, why)
			continue
		}
		var shares []float64
		for i, t := range rounds {
			logical := float64(t.Steps + 2)
			tps := (rep.Pgbench[i].TPS + rep.Pgbench[i+1].TPS) / 2
			bound := tps / logical
			share := t.WorkflowsPerSec / bound
			shares = append(shares, share)
			r.printf("  postgres %d-step, %d pollers (%s), round %d: %.1f workflows/s vs pgbench %.0f commits/s (mean of %.0f and %.0f) / %.0f commits per workflow (claim, %d steps, completion) = %.1f workflows/s: %.0f%%",
				t.Steps, t.Pollers, mode, i+1, t.WorkflowsPerSec, tps, rep.Pgbench[i].TPS, rep.Pgbench[i+1].TPS, logical, t.Steps, bound, 100*share)
			if t.PerWorkflow.WriteCommits > 0 {
				r.printf(" (against the %.2f commits per workflow the engine made: %.0f%%)", t.PerWorkflow.WriteCommits, 100*t.WorkflowsPerSec/(tps/t.PerWorkflow.WriteCommits))
			}
			r.printf("\n")
		}
		sort.Float64s(shares)
		median := shares[len(shares)/2]
		r.printf("  postgres %d-step, %d pollers (%s): median share %.0f%% of the pgbench bound (target >= 60%%): %s\n", steps, pollers, mode, 100*median, verdict(median >= 0.6))
	}
}

var executionTimeLine = regexp.MustCompile(`Execution Time: ([0-9.]+ ms)`)

// executionTime is the "Execution Time" of an EXPLAIN ANALYZE plan.
func executionTime(plan string) string {
	if m := executionTimeLine.FindStringSubmatch(plan); m != nil {
		return m[1]
	}
	return "?"
}

func verdict(ok bool) string {
	if ok {
		return "MET"
	}
	return "MISSED"
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// thousands prints n with comma separators (100000 -> "100,000").
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
