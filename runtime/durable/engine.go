package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/durable/keyring"
	"skydurable/runtime/durable/store"
	// Every store compiled in registers itself for store.Open.
	_ "skydurable/runtime/durable/store/stores"
	"skydurable/runtime/task"
)

// DefaultLease is how long a claim stays exclusive without progress.
const DefaultLease = 30 * time.Minute

// DefaultMaxPayloadBytes is the documented cap on any JSON the engine
// stores: start input, step result, signal payload, output.
const DefaultMaxPayloadBytes = 1 << 20

// KeysEnv is the environment variable `sky` reads Options.Keys from.
const KeysEnv = "SKY_DURABLE_KEYS"

// Options configure an Engine. The zero value is usable.
type Options struct {
	// Clock is the one clock for due times and leases. nil means the
	// database clock on PostgreSQL (no skew between workers) and the
	// system clock on SQLite. Tests inject a virtual clock.
	Clock func() time.Time
	// Lease is how long a claimed run stays exclusive; with heartbeats off
	// each journalled step renews it (with heartbeats the beats hold it).
	// Default DefaultLease.
	Lease time.Duration
	// Heartbeat is the short lease a worker holds a claimed run by and
	// renews (every third of it) until the attempt ends, so a killed
	// worker's run is claimable again this long after its last beat, and
	// a step longer than Lease is never taken over. Lease bounds it.
	// Default DefaultHeartbeat; negative turns heartbeats off (a claim
	// then holds the whole Lease, renewed only by journalled steps).
	Heartbeat time.Duration
	// MaxPayloadBytes caps every stored JSON text. Default
	// DefaultMaxPayloadBytes.
	MaxPayloadBytes int
	// Logger receives lifecycle events. Default: discarded.
	Logger *slog.Logger
	// WorkerID names this worker in claimed_by and logs. Default:
	// "<host>-<pid>-<random>".
	WorkerID string
	// Rand drives backoff jitter and lease tokens. Default: a PCG source
	// seeded from the time and process id.
	Rand *rand.Rand
	// OnStatement, when set, is called once per SQL statement the engine
	// sends, with an operation name ("claim", "append", ...) and the SQL.
	// Tests and benchmarks count round trips with it.
	OnStatement func(op, sql string)
	// OnBoundary, when set, is called at each journal boundary of every
	// fresh durable operation (see Boundary). A non-nil return stops the
	// worker there as if its process died (see Ctx.cross); test kits inject
	// crashes with it (runtime/durable/durabletest).
	OnBoundary func(Point) error
	// TracerProvider, when set, gets a span per run attempt, parented on
	// the span that started the run (its W3C trace context is stored with
	// the run), and a child span per fresh step. Default: no tracing, and
	// no trace context stored.
	TracerProvider trace.TracerProvider
	// Retention, when positive, makes the engine's Poll and Work compact
	// finished (done or cancelled) runs last updated longer ago than this,
	// automatically: one worker of the cluster at a time, every
	// RetentionEvery, in batches of RetentionBatch (see CompactOlderThan).
	// Default 0: finished runs keep their journal until compacted by hand.
	Retention time.Duration
	// OrphanSignalTTL is how long a signal sent to a run id no run has is
	// kept (it is delivered if a run with that id starts in time); older
	// ones are deleted with the retention work. Default
	// DefaultOrphanSignalTTL; negative keeps them.
	OrphanSignalTTL time.Duration
	// MeterProvider, when set, gets the engine's metrics: durable.runs
	// (started, done, failed, dead), durable.step.duration,
	// durable.claim.duration and durable.due.backlog. Default: none.
	MeterProvider metric.MeterProvider
	// Keys, when set, encrypts payloads at rest: a keyring written
	// "k2:BASE64,k1:BASE64" (SKY_DURABLE_KEYS; runtime/durable/keyring),
	// whose first key seals every input, output, journal entry, signal
	// payload, event value and schedule input the engine writes, and whose
	// every key opens. A keyring that does not parse makes Setup,
	// CheckSchema, Start and Poll fail with its error. Default: none
	// (payloads stored as plain JSON).
	Keys string
	// Namespace scopes everything the engine does to one namespace of
	// the database (namespace.go): runs and their ids (a run id is unique
	// per namespace), journals, signals, events, schedules, limits and
	// history; a worker claims only its namespace's runs, and listings
	// show only them. SKY_DURABLE_NAMESPACE; `[durable] namespace`.
	// Default DefaultNamespace, which holds every run written before
	// namespaces. A name that is not valid (CheckNamespace) makes Setup,
	// CheckSchema, Start and Poll fail with its error.
	Namespace string
}

// Engine runs durable workflows over one database. It holds no goroutines;
// all work happens inside calls (Poll advances one run). An Engine is safe
// for concurrent use; run several (in one process or many) for scale.
type Engine struct {
	db    *db.DB
	store store.Store
	clock func() time.Time
	lease time.Duration
	// heartbeat is Options.Heartbeat (heartbeat.go); 0 means off.
	heartbeat time.Duration
	maxBytes  int
	log       *slog.Logger
	worker    string
	// onBoundary is Options.OnBoundary (boundary.go).
	onBoundary func(Point) error

	randMu sync.Mutex
	rand   *rand.Rand

	tel *telemetry
	// deadlines throttles the deadline sweeps of Poll (deadline.go).
	deadlines deadlineSweeper
	// hints is what Work's hint listeners heard, quiet the last idle
	// probe's window (poll.go).
	hints hintState
	quiet quietWindow

	// flow is the flow-control and schedule state (flow.go, schedule.go).
	flow flowState

	// retain is the retention work's settings and throttle (retention.go).
	retain retention

	// sealed is store, sealing payloads with Options.Keys (sealed.go);
	// optsErr is why Options.Keys does not parse, or Options.Namespace
	// is not valid.
	sealed  *sealingStore
	optsErr error
	// scoped is the store scoped to namespace (namespace.go), under
	// sealed.
	scoped    *namespacedStore
	namespace string
}

// New makes an Engine over d. Call Setup once before use.
func New(d *db.DB, opts Options) *Engine {
	e := &Engine{
		db:        d,
		store:     newStore(d, store.Config{Hook: opts.OnStatement, Beats: opts.Heartbeat >= 0}),
		clock:     opts.Clock,
		lease:     opts.Lease,
		heartbeat: opts.Heartbeat,
		maxBytes:  opts.MaxPayloadBytes,
		log:       opts.Logger,
		worker:    opts.WorkerID,
		rand:      opts.Rand,

		onBoundary: opts.OnBoundary,
		retain:     retention{runs: opts.Retention, orphans: opts.OrphanSignalTTL},
	}
	// Without keys the seam still stands: a sealed value met without its
	// key is then a clear error rather than undecodable JSON.
	ring, err := parseKeys(opts.Keys)
	if err != nil {
		e.optsErr = err
	}
	e.namespace = opts.Namespace
	if e.namespace == "" {
		e.namespace = DefaultNamespace
	}
	if err := CheckNamespace(opts.Namespace); err != nil && e.optsErr == nil {
		e.optsErr = err
	}
	e.scoped = newNamespacedStore(e.store, e.namespace)
	e.sealed = &sealingStore{Store: e.scoped, ring: ring.Scoped(e.scoped.p)}
	e.store = e.sealed
	if e.retain.orphans == 0 {
		e.retain.orphans = DefaultOrphanSignalTTL
	}
	if e.clock == nil && !e.store.DatabaseClock() {
		e.clock = time.Now
	}
	if e.lease <= 0 {
		e.lease = DefaultLease
	}
	switch {
	case e.heartbeat == 0:
		e.heartbeat = DefaultHeartbeat
	case e.heartbeat < 0:
		e.heartbeat = 0
	}
	if e.maxBytes <= 0 {
		e.maxBytes = DefaultMaxPayloadBytes
	}
	if e.log == nil {
		// DiscardHandler is disabled at every level: no record is built.
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.namespace != DefaultNamespace {
		// Run ids are per namespace: every line says whose.
		e.log = e.log.With("namespace", e.namespace)
	}
	if e.rand == nil {
		e.rand = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
	}
	if e.worker == "" {
		host, _ := os.Hostname()
		e.worker = fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), e.randUint64()&0xffff)
	}
	e.tel = newTelemetry(e, opts.TracerProvider, opts.MeterProvider)
	return e
}

// DB is the database the engine works on.
func (e *Engine) DB() *db.DB { return e.db }

// WorkerID is the id this engine writes to claimed_by.
func (e *Engine) WorkerID() string { return e.worker }

// CheckKeys refuses a keyring (Options.Keys, KeysEnv) that does not parse,
// with the error an engine given it would fail with; "" is no keyring. A
// tool checks it before it opens anything, as a bad setting.
func CheckKeys(keys string) error {
	_, err := parseKeys(keys)
	return err
}

// parseKeys reads Options.Keys; the error is InvalidInput naming the bad
// entry, never its key material.
func parseKeys(keys string) (*keyring.Ring, error) {
	ring, err := keyring.Parse(keys)
	if err != nil {
		return nil, task.Errorf(task.InvalidInput, "durable: %v", err)
	}
	return ring, nil
}

// Setup creates the durable tables and indexes, or migrates an older schema
// in place. It is idempotent and safe when many processes call it at once.
func (e *Engine) Setup(ctx context.Context) error {
	if err := e.db.RefuseInMemory("durable.Setup"); err != nil {
		return err
	}
	if e.optsErr != nil {
		return e.optsErr
	}
	return e.store.Setup(ctx)
}

// CheckSchema says whether the database holds this code's durable tables,
// writing nothing (Setup creates or migrates them): NotFound when it has
// none, Unavailable when they are older than this code reads (a newer
// schema is fine: migrations only add). Read-only tools (`sky durable ls`,
// `show`, `ui --read-only`) call it instead of Setup.
func (e *Engine) CheckSchema(ctx context.Context) error {
	current, latest, err := e.store.SchemaVersion(ctx)
	switch {
	case e.optsErr != nil:
		return e.optsErr
	case err != nil:
		return err
	case current == 0:
		return wrapping(task.Errorf(task.NotFound, "the database has no durable tables yet (this sky reads schema version %d); "+
			"hint: nothing has run on it; check --db, DATABASE_URL or [database] in sky.toml", latest), ErrNoSchema)
	case current < latest:
		return task.Errorf(task.Unavailable, "the database's durable tables are at schema version %d, this sky reads version %d; "+
			"hint: run a worker or a program of this version on it once (it migrates them), or use the sky that made them", current, latest)
	}
	return nil
}

// now reads the injected clock; the zero time means "the database clock".
func (e *Engine) now() time.Time {
	if e.clock == nil {
		return time.Time{}
	}
	return e.clock()
}

// localNow is the engine's clock, or the system's under the database
// clock: for this process's own throttles.
func (e *Engine) localNow() time.Time {
	if e.clock == nil {
		return time.Now()
	}
	return e.clock()
}

func (e *Engine) randFloat() float64 {
	e.randMu.Lock()
	defer e.randMu.Unlock()
	return e.rand.Float64()
}

func (e *Engine) randUint64() uint64 {
	e.randMu.Lock()
	defer e.randMu.Unlock()
	return e.rand.Uint64()
}

// checkJSON validates text as one JSON value within the size cap.
func (e *Engine) checkJSON(what, text string) error {
	if len(text) > e.maxBytes {
		return tooLarge(what, len(text), e.maxBytes)
	}
	if !json.Valid([]byte(text)) {
		return invalidJSON(what, text)
	}
	if err := checkDepth(func() string { return what }, text); err != nil {
		return err
	}
	return checkText(what, text)
}

// Start starts a run of def with id runID. It is idempotent on the id: when
// a run with that id exists it does nothing (the first input wins), unless
// that run belongs to another workflow, which is a Conflict naming both.
func Start[I, O any](ctx context.Context, e *Engine, def Def[I, O], runID string, input I) error {
	js, err := def.encodeInput(runID, input)
	if err != nil {
		return err
	}
	return e.start(ctx, def.name, def.version, runID, js, runOptions{limits: def.limits})
}

// encodeInput is the JSON of input, the start input of run runID.
func (d Def[I, O]) encodeInput(runID string, input I) (string, error) {
	js, err := d.in.Encode(input)
	if err != nil {
		return "", task.Errorf(task.InvalidInput, "durable: the input of run %q of workflow %q does not encode: %s", runID, d.name, errText(err))
	}
	return js, nil
}

// StartJSON is Start for a type-erased workflow and an input already in
// JSON (the CLI and the Sky binding use it).
func (e *Engine) StartJSON(ctx context.Context, w Workflow, runID, input string) error {
	return e.start(ctx, w.Name, w.Version, runID, input, runOptions{limits: w.Limits})
}

func (e *Engine) start(ctx context.Context, workflow string, version int, runID, input string, opts runOptions) error {
	_, err := e.insert(ctx, workflow, version, runID, input, opts)
	return err
}

// insert is start, reporting whether it inserted the run (false: a run of
// the workflow had the id).
func (e *Engine) insert(ctx context.Context, workflow string, version int, runID, input string, opts runOptions) (bool, error) {
	r, err := e.newRun(ctx, workflow, version, runID, input, opts)
	if err != nil {
		return false, err
	}
	inserted, existing, err := e.store.InsertRun(ctx, r, e.now())
	if err != nil {
		return false, err
	}
	return inserted, e.started(ctx, r, inserted, existing)
}

// newRun checks a start's arguments (every start checks them alike, on
// both stores) and makes the run to insert, with the trace context of its
// start span.
func (e *Engine) newRun(ctx context.Context, workflow string, version int, runID, input string, opts runOptions) (store.NewRun, error) {
	if e.optsErr != nil {
		return store.NewRun{}, e.optsErr
	}
	if err := checkRunID(runID, workflow); err != nil {
		return store.NewRun{}, err
	}
	if workflow == "" {
		return store.NewRun{}, task.Errorf(task.InvalidInput, "durable: run %q names no workflow", runID)
	}
	if err := checkWorkflowName(workflow); err != nil {
		return store.NewRun{}, err
	}
	if err := e.checkJSON(fmt.Sprintf("the input of run %q", runID), input); err != nil {
		return store.NewRun{}, err
	}
	if err := checkStartOptions(opts.StartOptions, runID); err != nil {
		return store.NewRun{}, err
	}
	if version <= 0 {
		version = 1
	}
	key, err := opts.limitKey(workflow, runID, input)
	if err != nil {
		return store.NewRun{}, err
	}
	tc := e.tel.startSpan(ctx, workflow, runID, version)
	return store.NewRun{ID: runID, Workflow: workflow, Version: version, Input: input, TraceContext: tc,
		Deadline: opts.Deadline, Priority: opts.Priority, LimitKey: key}, nil
}

// started reports the insert of r: a new run is counted and logged; an
// existing one of another workflow (existing) is a Conflict naming both.
func (e *Engine) started(ctx context.Context, r store.NewRun, inserted bool, existing string) error {
	if inserted {
		e.tel.count(ctx, r.Workflow, "started")
		e.log.Info("durable run started", "run", r.ID, "workflow", r.Workflow, "worker", e.worker, "version", r.Version)
		return nil
	}
	if existing != r.Workflow {
		return wrapping(task.Errorf(task.Conflict,
			"durable: cannot start run %q of workflow %q: that id already belongs to a run of workflow %q; hint: run ids are global, prefix them with the workflow name",
			r.ID, r.Workflow, existing), ErrWorkflowMismatch)
	}
	return nil
}

// checkRunID refuses an empty run id or one with a control character.
func checkRunID(runID, workflow string) error {
	if runID == "" {
		return task.Errorf(task.InvalidInput, "durable: a run id must not be empty (workflow %q); hint: use a business key such as an order id", workflow)
	}
	return checkName("the run id", runID, func() string { return fmt.Sprintf(" (workflow %q)", workflow) },
		"run ids appear in logs and `sky durable ls`, use printable text such as an order id")
}

// Signal delivers signal name with a JSON payload to run runID (Sky's
// Durable.signal). The signal is a durable mailbox entry: it is kept until an
// AwaitSignal of that name consumes it, even when sent before the run waits
// or before the run exists (so the id is not checked). A signal is one-shot
// per (run, name): the first delivery wins, and a later one with that name is
// ignored (Ok, logged at info) whether or not the first was consumed; so is a
// signal to a finished run (a late webhook must not fail). ReplaceSignal is
// the operator's correction. It wakes the run only if the run waits for that
// name.
func (e *Engine) Signal(ctx context.Context, runID, name, payload string) error {
	_, err := e.putSignal(ctx, runID, name, payload)
	return err
}

// SignalValue is Signal with a payload encoded by cd.
func SignalValue[A any](ctx context.Context, e *Engine, runID, name string, cd codec.Codec[A], a A) error {
	js, err := cd.Encode(a)
	if err != nil {
		return task.Errorf(task.InvalidInput, "durable: the payload of signal %q to run %q does not encode: %s", name, runID, errText(err))
	}
	return e.Signal(ctx, runID, name, js)
}

// Describe reads a run and its whole journal.
func (e *Engine) Describe(ctx context.Context, runID string) (Run, []JournalEntry, error) {
	r, err := e.store.ReadRun(ctx, runID)
	if err == store.ErrRunNotFound {
		return Run{}, nil, runNotFound(runID)
	}
	if err != nil {
		return Run{}, nil, err
	}
	j, err := e.store.LoadJournal(ctx, runID)
	if err != nil {
		return Run{}, nil, err
	}
	return r, j, nil
}

// List reads up to limit runs (default 100), newest first; a non-empty
// status keeps only runs in that status. ListRuns filters more.
func (e *Engine) List(ctx context.Context, status Status, limit int) ([]Run, error) {
	return e.ListRuns(ctx, ListFilter{Status: status, Limit: limit})
}

// Retry makes a failed or dead run due now, with its attempts reset and its
// journal kept (journalled steps do not run again).
func (e *Engine) Retry(ctx context.Context, runID string) error {
	ok, err := e.store.RetryRun(ctx, runID, e.now())
	if err != nil || ok {
		if ok {
			operatorEvent(ctx, store.EventRetried, runID, "")
			e.log.Info("durable run retried", "run", runID)
		}
		return err
	}
	return e.refuse(ctx, runID, "retry", "only failed or dead runs can be retried")
}

// Wake makes a waiting run due now, whatever it waits for. Timers stay
// exact and signals stay awaited: a body that is still not ready suspends
// again. Operators use it to nudge a run; tests use it to wake a run early.
func (e *Engine) Wake(ctx context.Context, runID string) error {
	ok, err := e.store.WakeRun(ctx, runID, e.now())
	if err != nil || ok {
		return err
	}
	return e.refuse(ctx, runID, "wake", "only waiting runs can be woken")
}

// Cancel stops a waiting, running or failed run: its status becomes
// cancelled and a worker holding it loses its lease (it writes nothing
// more). A done, dead or cancelled run is refused (store.Machine).
func (e *Engine) Cancel(ctx context.Context, runID string) error {
	ok, err := e.store.CancelRun(ctx, runID, e.now())
	if err != nil || ok {
		if ok {
			operatorEvent(ctx, store.EventCancelled, runID, "")
			e.log.Info("durable run cancelled", "run", runID)
		}
		return err
	}
	return e.refuse(ctx, runID, "cancel", "it has already finished")
}

// Compact deletes the journal and signals of a done or cancelled run, keeping
// the run row (status, input, output) for inspection and stamping its
// compacted_at; it reports how many rows it deleted. CompactOlderThan
// compacts every finished run past a retention, in batches. Dead and failed runs keep their journal so Retry does not
// re-run journalled steps.
func (e *Engine) Compact(ctx context.Context, runID string) (int64, error) {
	ok, n, err := e.store.CompactRun(ctx, runID, e.now())
	if err != nil || ok {
		if ok {
			e.log.Info("durable run compacted", "run", runID, "rows", n)
		}
		return n, err
	}
	return 0, e.refuse(ctx, runID, "compact", "only done or cancelled runs can be compacted")
}

// refuse explains why an operation on runID changed nothing.
func (e *Engine) refuse(ctx context.Context, runID, op, why string) error {
	r, err := e.store.ReadRun(ctx, runID)
	if err == store.ErrRunNotFound {
		return runNotFound(runID)
	}
	if err != nil {
		return err
	}
	return wrapping(task.Errorf(task.Conflict, "durable: cannot %s run %q: it is %s and %s", op, runID, r.Status, why), ErrRefused)
}

// SaveSnapshot stores data (JSON) under id if seq is newer than the stored
// snapshot's; it reports whether it wrote. App.withDurable builds on it.
func (e *Engine) SaveSnapshot(ctx context.Context, id string, seq int64, data string) (bool, error) {
	if err := e.checkJSON(fmt.Sprintf("snapshot %q", id), data); err != nil {
		return false, err
	}
	return e.store.SaveSnapshot(ctx, id, seq, data, e.now())
}

// LoadSnapshot reads the snapshot stored under id; found is false when
// there is none.
func (e *Engine) LoadSnapshot(ctx context.Context, id string) (seq int64, data string, found bool, err error) {
	return e.store.LoadSnapshot(ctx, id)
}

// newStore opens the store registered for d's dialect (store/stores
// registers every store compiled in). A dialect without one is a build
// mistake, not a runtime condition, so it panics with the store's words.
func newStore(d *db.DB, c store.Config) store.Store {
	s, err := store.Open(d, c)
	if err != nil {
		panic(err)
	}
	return s
}
