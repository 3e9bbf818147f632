package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
	skydurable "skydurable/stdlib/durable"
)

func init() {
	registerDurable(durableCommand{
		use: "worker [--concurrency N] [--tick 1s] [--stop-timeout 10s] FILE", args: "FILE", worker: true,
		// The database is the program's, as `sky run FILE` opens it.
		project: func(pos []string) string { return pos[0] }, createsDB: true,
		short: "run the workflows FILE defines until SIGTERM",
		long: `Load the program FILE, take every workflow its top-level values define, and advance their runs
until SIGTERM or Ctrl-C, which stop it gracefully: runs in flight get --stop-timeout to finish
their step. The engine takes the environment's settings as sky run does (SKY_DURABLE_LEASE,
SKY_DURABLE_HEARTBEAT, SKY_DURABLE_LOG) and the database sky run FILE opens (FILE's sky.toml),
creating a SQLite one not there yet. SKY_DURABLE_NOTIFY=off (0, false, no) stops listening for
PostgreSQL's wake-up hints; unset, on, 1, true or yes listen; any other value exits 2.`,
		example: `  sky durable worker src/Workflows.sky
  sky durable worker --concurrency 16 --db postgres://app@db/app src/Workflows.sky`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.IntVar(&f.concurrency, "concurrency", durable.DefaultWorkerConcurrency, "runs advanced at once")
			fs.DurationVar(&f.tick, "tick", durable.DefaultWorkerTick, "how often an idle worker polls")
			fs.DurationVar(&f.stopTimeout, "stop-timeout", durable.DefaultStopTimeout, "how long runs in flight may go on after SIGTERM")
		},
		check: checkWorker,
		run:   durableWorker,
	})
}

// checkWorker refuses a worker that would never advance a run or never
// stop waiting (--concurrency, --tick and --stop-timeout below 1), and one
// whose environment does not say whether to listen for hints
// (durable.NotifyEnv), before it opens the database.
func checkWorker(f *durableFlags, _ []string) error {
	if _, err := durable.HintSettingsFromEnv(os.Getenv); err != nil {
		return err
	}
	switch {
	case f.concurrency <= 0:
		return fmt.Errorf("--concurrency %d: a worker advances at least one run at a time; hint: --concurrency 4 (the default is %d)", f.concurrency, durable.DefaultWorkerConcurrency)
	case f.tick <= 0:
		return fmt.Errorf("--tick %s: an idle worker polls every --tick, so it must be a positive duration; hint: --tick 1s (the default is %s)", f.tick, durable.DefaultWorkerTick)
	case f.stopTimeout <= 0:
		return fmt.Errorf("--stop-timeout %s: runs in flight get this long after SIGTERM, so it must be a positive duration; hint: --stop-timeout 10s (the default is %s)", f.stopTimeout, durable.DefaultStopTimeout)
	}
	return nil
}

// durableWorker is `sky durable worker FILE`: load the program FILE, take
// every workflow its top-level values define (WorkflowDef or
// RegisteredWorkflow, alone or in a list), and run a worker for them
// (Engine.Work) until SIGTERM or Ctrl-C, which stop it gracefully. The engine takes the environment's
// settings as `sky run` does (SKY_DURABLE_LEASE, SKY_DURABLE_HEARTBEAT,
// SKY_DURABLE_LOG, NOTIFY hints).
func durableWorker(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	_, proj, err := findProgram(a)
	if err != nil {
		return err
	}
	prog, _, _ := loadProgram(a[0], proj, loadOptions{missingHint: workerHint}, streams{stdout: out, stderr: f.warn})
	if prog == nil {
		return fmt.Errorf("the program %s does not load; no worker started", a[0])
	}
	defs, err := skydurable.WorkflowsIn(prog.Values())
	if err != nil {
		return err
	}
	if len(defs) == 0 {
		return task.Errorf(task.NotFound, "the program %s defines no workflow at the top level; hint: name the module whose top-level values are the Durable.register calls (or a list of Durable.erase values)", a[0])
	}
	// Loading FILE has reported each malformed setting once already.
	wopts := skydurable.WithProject(skydurable.OptionsFromEnvTo(os.Getenv, io.Discard), proj.File, os.Getenv, io.Discard)
	wopts.Namespace = e.Namespace() // --namespace, else as the program's
	hints, err := durable.HintSettingsFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	w := durable.New(e.DB(), wopts)
	opts := durable.WorkerOptions{
		Concurrency: f.concurrency, Tick: f.tick, StopTimeout: f.stopTimeout,
		Hints:  hints.For(w.DB()),
		Report: func(msg string) { fmt.Fprintln(f.warn, "sky durable worker: "+msg) },
	}
	fmt.Fprintf(out, "worker %s: running %s (concurrency %d%s); stop with SIGTERM or Ctrl-C\n", w.WorkerID(), view.Safe(strings.Join(workflowNames(defs, ""), ", ")), f.concurrency, namespaceNote(w))
	st, err := w.Work(ctx, defs, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "worker %s: stopped after advancing %d %s\n", w.WorkerID(), st.Advanced, plural(int(st.Advanced), "run", "runs"))
	return nil
}
