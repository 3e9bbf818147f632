package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/project"
	"skydurable/runtime/task"
	skydb "skydurable/stdlib/db"
)

// `sky durable` lets an operator see and fix durable runs: list them, show
// one with its journal, deliver a signal, cancel, retry, compact old ones. It opens the same
// database as Db.connect (sky.toml [database], DATABASE_URL, SKY_DB_DRIVER /
// SKY_DB_PATH), or the one --db names.
//
// Each subcommand is one durableCommand, registered by the file that
// implements it (registerDurable); runDurableCommand does what they share:
// the usage checks, opening the database, the tables, and the exit code (0
// ok, 1 not found or refused or the database failed, 2 usage).

func init() {
	register(newDurableCmd)
}

// durableCommand is one `sky durable` subcommand, whole: its synopsis,
// help, examples, flags, usage checks and action. Only use and run are
// required.
type durableCommand struct {
	// use is the synopsis after "sky durable": the name, then the
	// arguments and flags ("show ID [--json]").
	use string
	// args names the positional arguments ("ID NAME JSON"), for their
	// count and the error when it is wrong; "" takes none. arity, when
	// set, decides instead (signal --file takes one fewer).
	args  string
	arity func(f *durableFlags) (int, string)
	// short is the line of `sky durable help`; long (default short) and
	// example are the command's own help.
	short, long, example string
	// flags defines the subcommand's flags on fs, stored in f; every
	// subcommand also takes --db.
	flags func(fs *pflag.FlagSet, f *durableFlags)
	// check refuses bad flags and arguments before the database opens: a
	// usage error (exit 2).
	check func(f *durableFlags, pos []string) error
	// readOnly: the subcommand only reads, so it opens a SQLite file
	// read-only and never creates or migrates the tables (Engine.CheckSchema
	// instead of Setup), and inspecting a database changes nothing in it.
	// `ui --read-only` is one too.
	readOnly bool
	// worker: the subcommand's statements are the engine's, bounded by its
	// own leases, not by durableStatementTimeout.
	worker bool
	// createsDB: the subcommand serves a program (worker), so, as `sky run`
	// of it would, it creates the project's SQLite database when there is
	// none yet; a --db file must still exist (a typo there is an error).
	createsDB bool
	// invalidIsUsage: an InvalidInput error from run is a usage error
	// (exit 2) rather than a refusal (exit 1).
	invalidIsUsage bool
	// statuses, when set, are what --status completes to: the statuses
	// the subcommand accepts (else every run status).
	statuses []durable.Status
	// project, when set, is where the project whose database opens is
	// looked for (else the working directory).
	project func(pos []string) string
	// noSchema, when set, answers a database with no durable tables (else
	// that is an error, exit 1).
	noSchema func(s streams) int
	// offline, when set and it says so, runs the subcommand with no
	// database (replay --from) and gives its exit code.
	offline func(ctx context.Context, f *durableFlags, pos []string, s streams) (int, bool)
	run     func(ctx context.Context, e *durable.Engine, f *durableFlags, args []string, out io.Writer) error
}

// durableCommands are the subcommands of `sky durable`, by name.
var durableCommands = map[string]durableCommand{}

// registerDurable adds a `sky durable` subcommand; a duplicate name is a
// programming error.
func registerDurable(c durableCommand) {
	name := c.name()
	if _, dup := durableCommands[name]; dup {
		panic("sky durable: subcommand registered twice: " + name)
	}
	durableCommands[name] = c
}

func (c durableCommand) name() string { return strings.Fields(c.use)[0] }

// durableFlags are the values of a subcommand's flags; each subcommand
// defines the ones it takes (its durableCommand's flags).
type durableFlags struct {
	dsn       string
	namespace string
	status    string
	workflow  string
	parent    string
	limit     int
	before    string
	search    string
	json      bool
	olderThan string
	orphans   bool
	addr      string
	token     string
	readOnly  bool
	// allNamespaces: ui's --all-namespaces.
	allNamespaces bool
	// worker: its WorkerOptions.
	concurrency       int
	tick, stopTimeout time.Duration
	replace           bool
	file              string
	// fork, rewind: their flags (durable_fork.go).
	travel timeTravel
	// retry, cancel, release with filters (durable_bulk.go).
	bulk bulkFlags
	// export, replay: their flags (durable_export.go).
	gate gateFlags
	// rekey: its flags (durable_rekey.go).
	rekey rekeyFlags
	// stdin is the command's standard input; warn receives notes that are
	// not errors (stderr).
	stdin io.Reader
	warn  io.Writer
	// empty names the flags given an empty value (--workflow ""), which
	// runDurableCommand refuses: an empty value is an unset shell variable
	// far more often than a wish, and a filter left out widens a bulk action
	// to every workflow, an empty --db opens the default database.
	empty []string
}

// durableJSONFlag defines --json, which most subcommands take.
func durableJSONFlag(fs *pflag.FlagSet, f *durableFlags) {
	fs.BoolVar(&f.json, "json", false, "print JSON for scripts")
}

// durableHelpFooter ends `sky durable help`: what every subcommand shares.
const durableHelpFooter = `Every subcommand takes --db DSN (a postgres:// URL or a SQLite file path);
without it the database is the one Db.connect opens. Every subcommand works in one namespace:
--namespace N, else SKY_DURABLE_NAMESPACE, else [durable] namespace of sky.toml, else default
(sky durable namespaces lists them). Flags may come before or after the
arguments. On PostgreSQL a connection attempt gives up after 10s (connect_timeout=N in the URL
changes it) and, but for worker, a statement after 30s (statement_timeout=MS in the URL changes
it; not sent through PgBouncer).
` + durableExitCodes + `
sky durable help COMMAND, or sky durable COMMAND --help, prints a subcommand's flags and examples.
`

// newDurableCmd is `sky durable` with its subcommands. Without one it
// prints its help and exits 2; `sky durable help [COMMAND]` prints help.
func newDurableCmd() *cobra.Command {
	parent := &cobra.Command{
		Use:   "durable COMMAND [ARG...]",
		Short: "see and operate durable runs: ls, show, signal, retry, worker, ui... (sky durable help)",
		Args:  cobra.ArbitraryArgs,
	}
	for _, name := range slices.Sorted(maps.Keys(durableCommands)) {
		parent.AddCommand(durableCommands[name].command())
	}
	parent.RunE = func(cmd *cobra.Command, args []string) error {
		s := streamsOf(cmd)
		switch {
		case len(args) == 0:
			durableHelp(parent, s.stdout)
			return exitCode(exitNoBuild)
		case args[0] == "help" && len(args) > 1:
			sub, _, err := parent.Find(args[1:])
			if err != nil || sub == parent {
				fmt.Fprintf(s.stderr, "sky durable help: unknown subcommand %q%s\n\n", args[1], didYouMean(parent, args[1]))
				durableHelp(parent, s.stderr)
				return exitCode(exitNoBuild)
			}
			sub.InitDefaultHelpFlag()
			return sub.Help()
		case args[0] == "help":
			durableHelp(parent, s.stdout)
			return nil
		}
		fmt.Fprintf(s.stderr, "sky durable: unknown subcommand %q%s\n\n", args[0], didYouMean(parent, args[0]))
		durableHelp(parent, s.stderr)
		return exitCode(exitNoBuild)
	}
	defaultHelp := (&cobra.Command{}).HelpFunc()
	parent.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == parent {
			durableHelp(parent, c.OutOrStdout())
			return
		}
		defaultHelp(c, args)
	})
	return parent
}

// durableHelp prints `sky durable help`: every subcommand's synopsis and
// what it does, then what they share.
func durableHelp(parent *cobra.Command, w io.Writer) {
	fmt.Fprintln(w, "sky durable: see and operate the durable runs of a database.\n\nUsage:")
	for _, c := range parent.Commands() {
		if c.IsAvailableCommand() {
			fmt.Fprintf(w, "  sky durable %s\n      %s\n", c.Use, c.Short)
		}
	}
	fmt.Fprintf(w, "\n%s", durableHelpFooter)
}

// command is c as a cobra command, with flags of its own.
func (c durableCommand) command() *cobra.Command {
	f := &durableFlags{}
	cmd := &cobra.Command{
		Use: c.use, Short: c.short, Long: c.long, Example: c.example,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, pos []string) error {
			f.empty = emptyFlags(cmd.Flags())
			return exitWith(runDurableCommand(cmd.Context(), c, f, pos, streamsOf(cmd)))
		},
	}
	if c.args == "FILE" {
		cmd.ValidArgsFunction = skyFiles
	}
	cmd.SetHelpTemplate(durableCommandHelp)
	fs := cmd.Flags()
	fs.StringVar(&f.dsn, "db", "", "database: a postgres:// URL or a SQLite file path (default: the one Db.connect opens)")
	fs.StringVar(&f.namespace, "namespace", "", "the namespace to work in (default: SKY_DURABLE_NAMESPACE, else [durable] namespace of sky.toml, else default)")
	if c.flags != nil {
		c.flags(fs, f)
	}
	if fs.Lookup("status") != nil {
		_ = cmd.RegisterFlagCompletionFunc("status", completeStatuses(c.statuses))
	}
	return cmd
}

// emptyFlags names the flags of fs set to an empty text, in the order
// pflag visits them.
func emptyFlags(fs *pflag.FlagSet) []string {
	var names []string
	fs.Visit(func(fl *pflag.Flag) {
		if fl.Value.Type() == "string" && fl.Value.String() == "" {
			names = append(names, fl.Name)
		}
	})
	return names
}

// durableCommandHelp is the help of a subcommand: cobra's (what it does,
// its use line, examples and flags), then the exit codes.
const durableCommandHelp = `{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}

{{end}}{{.UsageString}}
` + durableExitCodes + "\n"

// durableExitCodes are the exit codes of every `sky durable` subcommand
// (the constants of cli.go), in their help.
const durableExitCodes = "Exit codes: 0 ok, 1 not found or refused (or the database failed), 2 usage."

// completeStatuses completes --status with statuses, or every run status
// when there are none.
func completeStatuses(statuses []durable.Status) cobra.CompletionFunc {
	words := []cobra.Completion{"running", "waiting", "done", "failed", "dead", "cancelled", "timed_out"}
	if statuses != nil {
		words = make([]cobra.Completion, len(statuses))
		for i, s := range statuses {
			words[i] = string(s)
		}
	}
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return words, cobra.ShellCompDirectiveNoFileComp
	}
}

// runDurable runs `sky durable args...` and returns its exit code.
func runDurable(ctx context.Context, args []string, s streams) int {
	return execute(ctx, append([]string{"durable"}, args...), s)
}

// runDurableCommand runs the subcommand c with its parsed flags f and its
// positional arguments pos: the usage checks, then the database and its
// tables, then c.run; it returns the exit code.
func runDurableCommand(ctx context.Context, c durableCommand, f *durableFlags, pos []string, s streams) int {
	name := c.name()
	f.stdin, f.warn = s.stdin, s.stderr
	if len(f.empty) > 0 {
		fmt.Fprintf(s.stderr, "sky durable %s: --%s is empty; hint: give it a value or leave it out (is the shell variable it was given unset?)\n", name, f.empty[0])
		return exitNoBuild
	}
	if err := checkDSN(f.dsn); err != nil {
		fmt.Fprintf(s.stderr, "sky durable %s: %v\n", name, err)
		return exitNoBuild
	}
	if c.check != nil {
		if err := c.check(f, pos); err != nil {
			fmt.Fprintf(s.stderr, "sky durable %s: %v\n", name, err)
			return exitNoBuild
		}
	}
	if err := durable.CheckNamespace(f.namespace); err != nil {
		fmt.Fprintf(s.stderr, "sky durable %s: --namespace: %v\n", name, err)
		return exitNoBuild
	}
	n, names := len(strings.Fields(c.args)), c.args
	if c.arity != nil {
		n, names = c.arity(f)
	}
	if len(pos) != n {
		fmt.Fprintf(s.stderr, "sky durable %s: expected %d argument(s) (%s), got %d\nusage: sky durable %s\n", name, n, names, len(pos), c.use)
		return exitNoBuild
	}
	if err := checkDurableEnv(); err != nil {
		fmt.Fprintf(s.stderr, "sky durable: %v\n", err)
		return exitNoBuild
	}
	if c.offline != nil {
		if code, done := c.offline(ctx, f, pos, s); done {
			return code
		}
	}
	start := ""
	if c.project != nil {
		start = c.project(pos)
	}
	namespace, source := durableNamespace(f.namespace, start)
	if err := durable.CheckNamespace(namespace); err != nil {
		// --namespace was checked above; this name came from elsewhere.
		fmt.Fprintf(s.stderr, "sky durable %s: %s: %v\n", name, source, err)
		return exitNoBuild
	}
	timeout := durableStatementTimeout
	if c.worker {
		timeout = 0
	}
	readOnly := c.readOnly || f.readOnly
	d, err := openDurableDB(ctx, f.dsn, start, timeout, readOnly, c.createsDB && f.dsn == "")
	if err != nil {
		fmt.Fprintf(s.stderr, "sky durable: %v\n", err)
		return exitFailure
	}
	defer d.Close()
	e := durable.New(d, durable.Options{WorkerID: "sky-durable-cli", Keys: os.Getenv(durable.KeysEnv), Namespace: namespace})
	setup := e.Setup
	if readOnly {
		setup = e.CheckSchema
	}
	if err := setup(ctx); err != nil {
		if errors.Is(err, durable.ErrNoSchema) && c.noSchema != nil {
			return c.noSchema(s)
		}
		fmt.Fprintf(s.stderr, "sky durable: %v\n", err)
		return exitFailure
	}
	if err := c.run(withCLIActor(ctx), e, f, pos, s.stdout); err != nil {
		fmt.Fprintf(s.stderr, "sky durable %s: %s\n", name, view.SafeText(err.Error()))
		if te := task.As(err); te.Kind == task.InvalidInput && (c.invalidIsUsage || f.bulk.filtered()) {
			return exitNoBuild
		}
		return exitFailure
	}
	return exitOK
}

// durableNamespace is the namespace a subcommand works in, and where its
// name came from, for an error about it: --namespace, else
// SKY_DURABLE_NAMESPACE, else [durable] namespace of the project of start
// (a project that cannot be read has none), else the default one ("").
func durableNamespace(flag, start string) (name, source string) {
	if flag != "" {
		return flag, "--namespace"
	}
	if env := os.Getenv(durable.NamespaceEnv); env != "" {
		return env, durable.NamespaceEnv
	}
	if proj, err := project.Find(start); err == nil && proj.File.DurableNamespace != "" {
		return proj.File.DurableNamespace, "[durable] namespace of " + filepath.Join(proj.Root, project.FileName)
	}
	return "", ""
}

// checkDurableEnv refuses a malformed setting of the environment that the
// subcommands read, before anything is opened: the keyring
// (SKY_DURABLE_KEYS) and the pooler mode (SKY_DB_POOLER, refused even where
// --db makes it unused, as Db.connect refuses it). Like a bad flag value it
// is a usage error; the message is the engine's or Db.connect's.
func checkDurableEnv() error {
	if err := durable.CheckKeys(os.Getenv(durable.KeysEnv)); err != nil {
		return err
	}
	_, err := db.ParsePooler(os.Getenv(db.EnvPooler))
	return err
}

// checkDSN refuses a --db URL of a scheme sky has no driver for, which
// would otherwise be taken for a SQLite file path ("the SQLite database
// mysql://... does not exist"). It names the scheme only: the URL may hold
// a password.
func checkDSN(dsn string) error {
	scheme, _, isURL := strings.Cut(dsn, "://")
	switch {
	case !isURL || scheme == "postgres" || scheme == "postgresql":
		return nil
	case strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"):
		return fmt.Errorf("--db is a %q URL; hint: write the scheme in lower case, postgres://", scheme)
	}
	return fmt.Errorf("--db is a %q URL, and sky opens only PostgreSQL and SQLite; hint: --db postgres://user@host:5432/dbname, or the path of a SQLite file", scheme)
}

// durableStatementTimeout bounds each PostgreSQL statement of `sky durable`
// but worker (ls, show, stats, the dashboard's queries...), unless the URL
// sets statement_timeout.
const durableStatementTimeout = 30 * time.Second

// openDurableDB opens --db, or what Db.connect would open in the project
// of start (the program of `replay`, else the working directory: the
// nearest sky.toml above it), with statementTimeout on PostgreSQL and, when readOnly, a SQLite file
// read-only. A SQLite file that does not exist is an error rather than a
// new empty database, unless create says to make it (as Db.connect does).
func openDurableDB(ctx context.Context, dsn, start string, statementTimeout time.Duration, readOnly, create bool) (*db.DB, error) {
	var cfg skydb.Config
	switch {
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		pooler, err := db.ParsePooler(os.Getenv(db.EnvPooler))
		if err != nil {
			return nil, err
		}
		cfg = skydb.Config{Driver: "postgres", DSN: dsn, Pooler: pooler}
	case dsn != "":
		cfg = skydb.Config{Driver: "sqlite", DSN: dsn}
	default:
		proj, err := project.Find(start)
		if err != nil {
			return nil, err
		}
		env := skydb.DefaultEnv()
		env.Dir = proj.Root
		if cfg, err = skydb.Resolve(env); err != nil {
			return nil, err
		}
	}
	if cfg.Driver == "sqlite" && !create {
		if _, err := os.Stat(cfg.DSN); errors.Is(err, os.ErrNotExist) {
			if dsn != "" {
				return nil, fmt.Errorf("the SQLite database %s does not exist; hint: check the path of --db (a file that does not exist is not made into an empty database)", cfg.DSN)
			}
			return nil, fmt.Errorf("the SQLite database %s does not exist; hint: run the program first, or pass --db", cfg.DSN)
		}
	}
	return db.OpenWith(ctx, cfg.Driver, cfg.DSN, db.Options{Pooler: cfg.Pooler, StatementTimeout: statementTimeout, ReadOnly: readOnly})
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
