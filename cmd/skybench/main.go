// Command skybench measures the durable engine. Its one subcommand, load,
// is the load run docs/benchmarks.md reports (and `make bench` runs):
//
//	skybench load [flags]
//
// It needs a PostgreSQL server (-database, default $SKY_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test?sslmode=disable) on which
// every measurement creates a database of its own (sky_bench_...) and drops
// it, and pgbench (on PATH or in /usr/lib/postgresql/*/bin) for the
// reference commit rate. It prints figures and asserts none, except that
// every run it started ended done; it exits 1 when a measurement failed.
//
// It may import its internal/loadtest and the standard library.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"skydurable/cmd/skybench/internal/loadtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	_, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errFailed):
		fmt.Fprintln(os.Stderr, "skybench:", err)
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "skybench:", err)
		os.Exit(2)
	}
}

// errFailed marks a run that started and then failed (exit status 1), as
// against a usage error (exit status 2).
var errFailed = errors.New("load run failed")

const usage = `usage: skybench load [flags]

The load run of the durable engine (docs/benchmarks.md): throughput, round
trips, commits and statements per workflow, machine CPU per workflow, the
share of pgbench's commit rate, replayed and transactional steps, claim
latency and empty polls with many waiting runs, and what OpenTelemetry
costs (telemetry off and on). The full run takes about 4 minutes on 2
cores; every measurement uses a database of its own, created on the server
and dropped.

flags:
`

// run runs the command with args (without the program name), printing
// figures to stdout and usage and warnings to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (*loadtest.Report, error) {
	if len(args) == 0 || args[0] != "load" {
		fmt.Fprint(stderr, usage)
		defaults := loadtest.Default()
		loadFlags(&defaults, stderr).PrintDefaults()
		if len(args) == 0 {
			return nil, errors.New("missing subcommand: load")
		}
		if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
			return nil, flag.ErrHelp
		}
		return nil, fmt.Errorf("unknown subcommand %q: want load", args[0])
	}
	cfg := loadtest.Default()
	fs := loadFlags(&cfg, stderr)
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	cfg.Out, cfg.Log = stdout, stderr
	rep, err := loadtest.Run(ctx, cfg)
	if err != nil && rep != nil {
		return rep, fmt.Errorf("%w: %w", errFailed, err)
	}
	return rep, err
}

// loadFlags are the flags of `skybench load`, bound to cfg.
func loadFlags(cfg *loadtest.Config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("skybench load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.ServerURL, "database", cfg.ServerURL,
		"PostgreSQL server `URL` (postgres://...; $"+loadtest.EnvURL+" when set); each measurement creates and drops its own database there")
	fs.Var(list{&cfg.Drivers}, "drivers", "`stores` to measure, comma-separated: postgres, sqlite")
	fs.Var(ints{&cfg.Steps}, "steps", "`steps` per workflow of the throughput configurations, comma-separated")
	fs.Var(ints{&cfg.Pollers}, "pollers", "concurrent `pollers` of the throughput configurations (goroutines sharing one Engine), comma-separated")
	fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds,
		"times the compared configuration (postgres, most steps, most pollers) runs in each mode, alternating with pgbench; 0: once per mode, no pgbench")
	fs.Var(modes{&cfg.Modes}, "modes", "poll `modes` of the compared configuration, comma-separated: poll (Poll), pollwith (PollWith MaxRuns 100) or pollwith:N")
	fs.IntVar(&cfg.Runs, "runs", cfg.Runs, "timed workflows per throughput configuration")
	fs.IntVar(&cfg.WarmRuns, "warm", cfg.WarmRuns, "warm-up workflows per poller before the timed pass")
	fs.IntVar(&cfg.CountedRuns, "counted", cfg.CountedRuns, "workflows of the pass counted through the wire proxy (also the transactional-step runs)")
	fs.IntVar(&cfg.PgbenchSeconds, "pgbench-seconds", cfg.PgbenchSeconds, "length of each pgbench run")
	fs.Var(list{&cfg.Parts}, "parts", "`measurements` per driver, comma-separated: "+strings.Join(loadtest.AllParts, ", "))
	fs.Var(ints{&cfg.Waiting}, "waiting", "numbers of `waiting` runs in the table for the claim measurements, comma-separated")
	return fs
}

// list is a comma-separated flag of words.
type list struct{ p *[]string }

func (l list) String() string {
	if l.p == nil {
		return ""
	}
	return strings.Join(*l.p, ",")
}

func (l list) Set(s string) error {
	*l.p = nil
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			*l.p = append(*l.p, f)
		}
	}
	return nil
}

// ints is a comma-separated flag of integers.
type ints struct{ p *[]int }

func (l ints) String() string {
	if l.p == nil {
		return ""
	}
	var s []string
	for _, n := range *l.p {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ",")
}

func (l ints) Set(s string) error {
	*l.p = nil
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return err
		}
		*l.p = append(*l.p, n)
	}
	return nil
}

// defaultChainRuns is the MaxRuns of "pollwith" without a number.
const defaultChainRuns = 100

// modes is a comma-separated flag of poll modes, kept as the pollers'
// MaxRuns: poll is 1, pollwith:N is N.
type modes struct{ p *[]int }

func (m modes) String() string {
	if m.p == nil {
		return ""
	}
	var s []string
	for _, n := range *m.p {
		if n == 1 {
			s = append(s, "poll")
		} else {
			s = append(s, "pollwith:"+strconv.Itoa(n))
		}
	}
	return strings.Join(s, ",")
}

func (m modes) Set(s string) error {
	*m.p = nil
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		switch {
		case f == "":
		case f == "poll":
			*m.p = append(*m.p, 1)
		case f == "pollwith":
			*m.p = append(*m.p, defaultChainRuns)
		case strings.HasPrefix(f, "pollwith:"):
			n, err := strconv.Atoi(strings.TrimPrefix(f, "pollwith:"))
			if err != nil || n < 2 {
				return fmt.Errorf("pollwith:N needs N >= 2 (N = 1 is poll), not %q", f)
			}
			*m.p = append(*m.p, n)
		default:
			return fmt.Errorf("unknown mode %q: poll, pollwith or pollwith:N", f)
		}
	}
	return nil
}
