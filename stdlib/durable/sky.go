package durable

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/project"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skycodec "skydurable/stdlib/codec"
	skydb "skydurable/stdlib/db"
)

// This file is the Sky binding of the engine (Std.Durable): a thin adapter
// from Sky values to the Go API. Sky workflows are Def[value.Value,
// value.Value] with Sky codecs; a Sky Ctx, WorkflowDef and RegisteredWorkflow
// are value.Opaque values of the kinds below.

//go:embed Durable.sky
var source string

// Modules returns the Sky source of Std.Durable.
func Modules() map[string]string {
	return map[string]string{"Std.Durable": source, "Std.Durable.Test": testSource}
}

// The value.Opaque kinds of the Sky binding.
const (
	ctxKind        = "Durable.Ctx"
	defKind        = "Durable.WorkflowDef"
	registeredKind = "Durable.RegisteredWorkflow"
)

// skyDef is a Sky WorkflowDef.
type skyDef = durable.Def[value.Value, value.Value]

// skyWorkflowDef is the value of a Sky WorkflowDef: the definition and the
// identity of the `register` call that made it, which its erased form keeps
// so poll can tell one workflow listed twice (harmless) from two different
// workflows under one name and version (an error).
type skyWorkflowDef struct {
	def skyDef
	id  *registration
}

// skyRegistered is the value of a Sky RegisteredWorkflow.
type skyRegistered struct {
	w  durable.Workflow
	id *registration
}

// registration is the identity of one register call.
type registration struct{ name string }

// binding holds one Engine per database a program uses, so Durable calls on
// the same Db share the engine's options.
type binding struct {
	mu      sync.Mutex
	engines map[*db.DB]*durable.Engine
	opts    durable.Options
}

// engineArg is the engine of the Sky Db argument v of kernel fn. An
// in-memory SQLite Db, fine for plain Std.Db, is refused here: the engine's
// runs must outlive the process.
func (b *binding) engineArg(fn string, v value.Value) (*durable.Engine, error) {
	d, err := skydb.FromValue(v)
	if err != nil {
		return nil, value.BadArg(fn, "a Db", v)
	}
	if err := d.RefuseInMemory(fn); err != nil {
		return nil, err
	}
	return b.engineFor(d), nil
}

// engineFor returns the engine of d, making it on first use. A Db that is a
// transaction (the tx of Db.withTransaction or Durable.transaction) lives
// for one transaction: its engine is made afresh and never cached, so a
// worker that starts or signals runs inside transactions does not keep one
// engine (and one finished transaction) per call forever.
func (b *binding) engineFor(d *db.DB) *durable.Engine {
	if d.InTransaction() {
		return durable.New(d, b.opts)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.engines[d]; ok {
		return e
	}
	e := durable.New(d, b.opts)
	b.engines[d] = e
	return e
}

// OptionsFromEnv is the engine configuration `sky` programs get from their
// environment: lifecycle logs (see LoggerFromEnv); SKY_DURABLE_LEASE, the
// lease of a claimed run as a Go duration ("30m" by default; crash demos and
// tests shorten it so a peer reclaims a killed worker's run sooner);
// SKY_DURABLE_HEARTBEAT, the short lease a worker renews while it holds a
// run ("15s" by default, "off" for none: a killed worker's run is then
// reclaimed after the whole lease); and
// SKY_DURABLE_MAX_PAYLOAD_BYTES, the cap on every stored JSON text (1 MiB by
// default); SKY_DURABLE_RETENTION and SKY_DURABLE_ORPHAN_SIGNAL_TTL (ages
// such as 30d: Options.Retention, Options.OrphanSignalTTL). A malformed value is reported on warn and the default kept,
// except SKY_DURABLE_KEYS (Options.Keys, the keyring that encrypts payloads
// at rest) and SKY_DURABLE_NAMESPACE (Options.Namespace): a keyring that
// does not parse or a namespace name that is not valid stops the engine at
// its first use (Setup), so a typo never makes a worker write plain text,
// nor work in the wrong namespace.
func OptionsFromEnv(getenv func(string) string) durable.Options {
	return OptionsFromEnvTo(getenv, os.Stderr)
}

// OptionsFromEnvTo is OptionsFromEnv reporting a malformed value on warn,
// for a caller that has reported them once already (io.Discard).
func OptionsFromEnvTo(getenv func(string) string, warn io.Writer) durable.Options {
	opts := durable.Options{Logger: loggerFromEnv(getenv, os.Stderr, warn), Keys: getenv(durable.KeysEnv), Namespace: getenv(durable.NamespaceEnv)}
	if v := getenv("SKY_DURABLE_LEASE"); v != "" {
		lease, err := time.ParseDuration(v)
		if err != nil || lease <= 0 {
			fmt.Fprintf(warn, "sky: SKY_DURABLE_LEASE=%q is not a positive duration (e.g. 30s, 5m); using the default %s\n", v, durable.DefaultLease)
		} else {
			opts.Lease = lease
		}
	}
	if v := getenv("SKY_DURABLE_HEARTBEAT"); v != "" {
		hb, err := time.ParseDuration(v)
		switch {
		case v == "off":
			opts.Heartbeat = -1
		case err != nil || hb <= 0:
			fmt.Fprintf(warn, "sky: SKY_DURABLE_HEARTBEAT=%q is not a positive duration (e.g. 5s) or off; using the default %s\n", v, durable.DefaultHeartbeat)
		default:
			opts.Heartbeat = hb
		}
	}
	if v := getenv("SKY_DURABLE_MAX_PAYLOAD_BYTES"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			fmt.Fprintf(warn, "sky: SKY_DURABLE_MAX_PAYLOAD_BYTES=%q is not a positive number of bytes (e.g. 4194304); using the default %d\n", v, durable.DefaultMaxPayloadBytes)
		} else {
			opts.MaxPayloadBytes = n
		}
	}
	for _, a := range []struct {
		env string
		dst *time.Duration
	}{{"SKY_DURABLE_RETENTION", &opts.Retention}, {"SKY_DURABLE_ORPHAN_SIGNAL_TTL", &opts.OrphanSignalTTL}} {
		if v := getenv(a.env); v != "" {
			setAge(a.dst, a.env, v, warn)
		}
	}
	return opts
}

// WithProject applies the [durable] settings of sky.toml (retention,
// orphan_signal_ttl, namespace) to opts, where the environment
// (OptionsFromEnv) has not set them: the environment wins. A malformed age
// is reported on warn and the setting left as it was; a namespace name that
// is not valid is the engine's error (durable.CheckNamespace).
func WithProject(opts durable.Options, f project.File, getenv func(string) string, warn io.Writer) durable.Options {
	for _, a := range []struct {
		key, text, env string
		dst            *time.Duration
	}{
		{"[durable] retention", f.DurableRetention, "SKY_DURABLE_RETENTION", &opts.Retention},
		{"[durable] orphan_signal_ttl", f.DurableOrphanSignalTTL, "SKY_DURABLE_ORPHAN_SIGNAL_TTL", &opts.OrphanSignalTTL},
	} {
		if a.text != "" && getenv(a.env) == "" {
			setAge(a.dst, "sky.toml "+a.key, a.text, warn)
		}
	}
	if f.DurableNamespace != "" && getenv(durable.NamespaceEnv) == "" {
		opts.Namespace = f.DurableNamespace
	}
	return opts
}

// setAge sets *dst to the age text (durable.ParseAge), or reports on warn
// why it cannot and leaves *dst.
func setAge(dst *time.Duration, what, text string, warn io.Writer) {
	d, err := durable.ParseAge(what, text)
	if err != nil {
		fmt.Fprintf(warn, "sky: %v; the setting is ignored\n", err)
		return
	}
	*dst = d
}

// LoggerFromEnv is the lifecycle logger `sky` programs get, one line per
// event on stderr, plain text or JSON when SKY_LOG_FORMAT=json (another
// value than json or text is named on stderr and text kept). Its level is
// SKY_DURABLE_LOG (debug, info, warn, error, or off); unset means warn, so a
// healthy worker is quiet while failed attempts, dead runs and lost leases
// always show, and so does a value that is not a level (named on warn).
// SKY_DURABLE_LOG=info logs every lifecycle event.
func LoggerFromEnv(getenv func(string) string) *slog.Logger {
	return loggerFromEnv(getenv, os.Stderr, os.Stderr)
}

// loggerFromEnv is LoggerFromEnv writing its lines to w and its warnings
// about malformed settings to warn.
func loggerFromEnv(getenv func(string) string, w, warn io.Writer) *slog.Logger {
	level := strings.ToLower(getenv("SKY_DURABLE_LOG"))
	if level == "off" {
		return nil
	}
	if level == "" {
		level = "warn"
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		fmt.Fprintf(warn, "sky: SKY_DURABLE_LOG=%q is not a level (debug, info, warn, error, off); using warn\n", level)
		lv = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format := getenv("SKY_LOG_FORMAT"); strings.ToLower(strings.TrimSpace(format)) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts))
	case "", "text":
	default:
		fmt.Fprintf(warn, "sky: SKY_LOG_FORMAT=%q is not a log format (json, text); using text\n", format)
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// KernelsWith returns the Std.Durable kernels; every engine they make uses
// opts (tests inject a clock this way).
func KernelsWith(opts durable.Options) map[string]value.Kernel {
	b := &binding{engines: map[*db.DB]*durable.Engine{}, opts: opts}
	ks := []value.Kernel{
		{Name: "Durable_register", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			return registerKernel("Durable.register", durable.DefaultRetryPolicy, 1, a[0], a[1], a[2], a[3])
		}},
		{Name: "Durable_registerWith", Arity: 5, Fn: func(a []value.Value) (value.Value, error) {
			policy, err := retryPolicyArg(a[0])
			if err != nil {
				return nil, err
			}
			return registerKernel("Durable.registerWith", policy, 1, a[1], a[2], a[3], a[4])
		}},
		{Name: "Durable_registerVersioned", Arity: 5, Fn: func(a []value.Value) (value.Value, error) {
			version, ok := a[1].(int64)
			if !ok {
				return nil, value.BadArg("Durable.registerVersioned", "an Int version", a[1])
			}
			if version < 1 {
				name, _ := a[0].(string)
				return nil, task.Errorf(task.InvalidInput,
					"Durable.registerVersioned: version %d of workflow %q; hint: versions start at 1 (a workflow registered with register is version 1), so its next version is 2", version, name)
			}
			return registerKernel("Durable.registerVersioned", durable.DefaultRetryPolicy, int(version), a[0], a[2], a[3], a[4])
		}},
		{Name: "Durable_erase", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			d, err := defArg("Durable.erase", a[0])
			if err != nil {
				return nil, err
			}
			return value.Opaque{Kind: registeredKind, V: skyRegistered{w: d.def.Erase(), id: d.id}}, nil
		}},
		{Name: "Durable_setup", Arity: 1, Fn: b.dbTask("Durable.setup", func(ctx context.Context, e *durable.Engine) (value.Value, error) {
			return value.Unit{}, e.Setup(ctx)
		})},
		{Name: "Durable_start", Arity: 4, Fn: b.start},
		{Name: "Durable_startWith", Arity: 5, Fn: b.startWith},
		{Name: "Durable_signal", Arity: 5, Fn: b.signal},
		{Name: "Durable_poll", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			return b.poll("Durable.poll", durable.PollOptions{}, a[0], a[1])
		}},
		{Name: "Durable_pollWith", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			opts, err := pollOptionsArg(a[0])
			if err != nil {
				return nil, err
			}
			return b.poll("Durable.pollWith", opts, a[1], a[2])
		}},
		{Name: "Durable_compact", Arity: 2, Fn: b.compact},
		{Name: "Durable_step", Arity: 4, Fn: stepKernel},
		{Name: "Durable_stepValue", Arity: 4, Fn: stepValueKernel},
		{Name: "Durable_transaction", Arity: 4, Fn: transactionKernel},
		{Name: "Durable_sleep", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			c, err := ctxArg("Durable.sleep", a[0])
			if err != nil {
				return nil, err
			}
			ms, ok := a[1].(int64)
			if !ok {
				return nil, value.BadArg("Durable.sleep", "an Int of milliseconds", a[1])
			}
			return unitTask(durable.Sleep(c, ms)), nil
		}},
		{Name: "Durable_sleepAs", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			c, err := ctxArg("Durable.sleepAs", a[0])
			if err != nil {
				return nil, err
			}
			id, ok := a[1].(string)
			if !ok {
				return nil, value.BadArg("Durable.sleepAs", "a String sleep id", a[1])
			}
			ms, ok := a[2].(int64)
			if !ok {
				return nil, value.BadArg("Durable.sleepAs", "an Int of milliseconds", a[2])
			}
			if id == "" {
				return emptyName(c, "Durable.sleepAs", "sleep id", `"reminder-wait"`), nil
			}
			return unitTask(durable.SleepAs(c, id, ms)), nil
		}},
		{Name: "Durable_awaitSignal", Arity: 3, Fn: awaitSignalKernel},
		{Name: "Durable_awaitSignalFor", Arity: 4, Fn: awaitSignalForKernel},
		{Name: "Durable_isSuspend", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return durable.IsSuspend(value.ToError(a[0])), nil
		}},
		{Name: "Durable_conn", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			c, err := ctxArg("Durable.conn", a[0])
			if err != nil {
				return nil, err
			}
			return skydb.ToValue(c.DB()), nil
		}},
		{Name: "Durable_runId", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			c, err := ctxArg("Durable.runId", a[0])
			if err != nil {
				return nil, err
			}
			return c.RunID(), nil
		}},
		{Name: "Durable_idempotencyKey", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			c, err := ctxArg("Durable.idempotencyKey", a[0])
			if err != nil {
				return nil, err
			}
			id, ok := a[1].(string)
			if !ok {
				return nil, value.BadArg("Durable.idempotencyKey", "a String step id", a[1])
			}
			return c.IdempotencyKey(id), nil
		}},
		{Name: "Durable_status", Arity: 2, Fn: b.runTask("Durable.status", func(ctx context.Context, e *durable.Engine, id string) (value.Value, error) {
			r, _, err := e.Describe(ctx, id)
			if err != nil {
				return nil, err
			}
			return string(r.Status), nil
		})},
		{Name: "Durable_describe", Arity: 2, Fn: b.runTask("Durable.describe", func(ctx context.Context, e *durable.Engine, id string) (value.Value, error) {
			r, _, err := e.Describe(ctx, id)
			if err != nil {
				return nil, err
			}
			return runInfo(r), nil
		})},
		{Name: "Durable_cancel", Arity: 2, Fn: b.runTask("Durable.cancel", func(ctx context.Context, e *durable.Engine, id string) (value.Value, error) {
			return value.Unit{}, e.Cancel(ctx, id)
		})},
		{Name: "Durable_retry", Arity: 2, Fn: b.runTask("Durable.retry", func(ctx context.Context, e *durable.Engine, id string) (value.Value, error) {
			return value.Unit{}, e.Retry(ctx, id)
		})},
	}
	ks = append(ks, b.childKernels()...)
	ks = append(ks, b.forkKernels()...)
	ks = append(ks, b.flowKernels()...)
	ks = append(ks, SnapshotKernels()...)
	ks = append(ks, PermanentKernels()...)
	ks = append(ks, b.workerKernels()...)
	ks = append(ks, TestKernels()...)
	out := make(map[string]value.Kernel, len(ks))
	for _, k := range ks {
		out[k.Name] = k
	}
	return out
}

// registerKernel builds a Sky WorkflowDef from a name, codecs and a Sky body.
func registerKernel(fn string, policy durable.RetryPolicy, version int, name, in, out, body value.Value) (value.Value, error) {
	n, ok := name.(string)
	if !ok {
		return nil, value.BadArg(fn, "a String workflow name", name)
	}
	inC, err := skycodec.FromValue(in)
	if err != nil {
		return nil, value.BadArg(fn, "the input Codec", in)
	}
	outC, err := skycodec.FromValue(out)
	if err != nil {
		return nil, value.BadArg(fn, "the output Codec", out)
	}
	if _, ok := body.(value.Func); !ok {
		return nil, value.BadArg(fn, "a body function (Ctx -> i -> Task Error o)", body)
	}
	def := durable.RegisterWith(policy, n, inC, outC, func(c *durable.Ctx, input value.Value) task.Task[value.Value] {
		return value.ApplyTask(fn+" body of "+n, body, value.Opaque{Kind: ctxKind, V: c}, input)
	})
	if version != 1 {
		def = def.Versioned(version)
	}
	return value.Opaque{Kind: defKind, V: skyWorkflowDef{def: def, id: &registration{name: n}}}, nil
}

func retryPolicyArg(v value.Value) (durable.RetryPolicy, error) {
	r, ok := v.(*value.Record)
	if !ok {
		return durable.RetryPolicy{}, value.BadArg("Durable.registerWith", "a RetryPolicy record", v)
	}
	field := func(name string) (int64, error) {
		f, ok := r.Get(name)
		if i, isInt := f.(int64); ok && isInt {
			return i, nil
		}
		return 0, value.BadArg("Durable.registerWith", "a RetryPolicy with an Int field "+name, v)
	}
	attempts, err := field("maxAttempts")
	if err != nil {
		return durable.RetryPolicy{}, err
	}
	initial, err := field("initialBackoffMs")
	if err != nil {
		return durable.RetryPolicy{}, err
	}
	maxB, err := field("maxBackoffMs")
	if err != nil {
		return durable.RetryPolicy{}, err
	}
	ms := func(n int64) time.Duration { return time.Duration(min(n, durable.MaxTimerMs)) * time.Millisecond }
	return durable.RetryPolicy{
		MaxAttempts:    int(min(attempts, math.MaxInt32)),
		InitialBackoff: ms(initial),
		MaxBackoff:     ms(maxB),
	}.WithDefaults(), nil
}

func defArg(fn string, v value.Value) (skyWorkflowDef, error) {
	if o, ok := v.(value.Opaque); ok && o.Kind == defKind {
		if d, ok := o.V.(skyWorkflowDef); ok {
			return d, nil
		}
	}
	return skyWorkflowDef{}, value.BadArg(fn, "a WorkflowDef (from Durable.register)", v)
}

func ctxArg(fn string, v value.Value) (*durable.Ctx, error) {
	if o, ok := v.(value.Opaque); ok && o.Kind == ctxKind {
		if c, ok := o.V.(*durable.Ctx); ok {
			return c, nil
		}
	}
	return nil, value.BadArg(fn, "a Durable Ctx", v)
}

func unitTask(t task.Task[struct{}]) value.Value {
	return value.Task{T: task.Map(t, func(struct{}) value.Value { return value.Unit{} })}
}

// dbTask is a kernel of arity 1 over a Db: the task runs f with its engine.
func (b *binding) dbTask(fn string, f func(context.Context, *durable.Engine) (value.Value, error)) func([]value.Value) (value.Value, error) {
	return func(a []value.Value) (value.Value, error) {
		e, err := b.engineArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
			v, err := f(ctx, e)
			return v, setupHint(fn, err)
		})}, nil
	}
}

// runTask is a kernel of arity 2 over a Db and a run id.
func (b *binding) runTask(fn string, f func(context.Context, *durable.Engine, string) (value.Value, error)) func([]value.Value) (value.Value, error) {
	return func(a []value.Value) (value.Value, error) {
		e, err := b.engineArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		id, ok := a[1].(string)
		if !ok {
			return nil, value.BadArg(fn, "a String run id", a[1])
		}
		return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
			v, err := f(ctx, e, id)
			return v, setupHint(fn, err)
		})}, nil
	}
}

func (b *binding) start(a []value.Value) (value.Value, error) {
	const fn = "Durable.start"
	e, err := b.engineArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	def, id, input, err := startArgs(fn, a)
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		if err := unnamed(fn, def, id); err != nil {
			return nil, err
		}
		return value.Unit{}, setupHint(fn, durable.Start(ctx, e, def.def, id, input))
	})}, nil
}

func (b *binding) signal(a []value.Value) (value.Value, error) {
	const fn = "Durable.signal"
	e, err := b.engineArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	id, name, cd, payload, err := signalArgs(fn, a)
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		return value.Unit{}, setupHint(fn, durable.SignalValue(ctx, e, id, name, cd, payload))
	})}, nil
}

// startArgs reads the WorkflowDef, run id and input of a start kernel
// (Durable.start, DurableTest.start): a[1], a[2], a[3].
func startArgs(fn string, a []value.Value) (skyWorkflowDef, string, value.Value, error) {
	def, err := defArg(fn, a[1])
	if err != nil {
		return skyWorkflowDef{}, "", nil, err
	}
	id, ok := a[2].(string)
	if !ok {
		return skyWorkflowDef{}, "", nil, value.BadArg(fn, "a String run id", a[2])
	}
	return def, id, a[3], nil
}

// signalArgs reads the run id, signal name, Codec and payload of a signal
// kernel (Durable.signal, DurableTest.signal): a[1] to a[4].
func signalArgs(fn string, a []value.Value) (id, name string, cd skycodec.Codec, payload value.Value, err error) {
	id, ok := a[1].(string)
	if !ok {
		return "", "", cd, nil, value.BadArg(fn, "a String run id", a[1])
	}
	if name, ok = a[2].(string); !ok {
		return "", "", cd, nil, value.BadArg(fn, "a String signal name", a[2])
	}
	if cd, err = skycodec.FromValue(a[3]); err != nil {
		return "", "", cd, nil, value.BadArg(fn, "a Codec", a[3])
	}
	return id, name, cd, a[4], nil
}

func (b *binding) poll(fn string, opts durable.PollOptions, dbArg, list value.Value) (value.Value, error) {
	e, err := b.engineArg(fn, dbArg)
	if err != nil {
		return nil, err
	}
	listed, err := registeredList(fn, list)
	if err != nil {
		return nil, err
	}
	defs, clash := distinctWorkflows(fn, listed)
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		if clash != nil {
			return nil, clash
		}
		wakeAppOnHints(ctx, e.DB())
		worked, err := e.PollWith(ctx, defs, opts)
		return worked, setupHint(fn, err)
	})}, nil
}

// registeredList reads a Sky List RegisteredWorkflow.
func registeredList(fn string, list value.Value) ([]skyRegistered, error) {
	l, ok := list.(*value.List)
	if !ok && list != nil {
		return nil, value.BadArg(fn, "a List RegisteredWorkflow", list)
	}
	var listed []skyRegistered
	for _, v := range l.Slice() {
		o, ok := v.(value.Opaque)
		r, isR := o.V.(skyRegistered)
		if !ok || o.Kind != registeredKind || !isR {
			return nil, value.BadArg(fn, "a RegisteredWorkflow (from Durable.erase)", v)
		}
		listed = append(listed, r)
	}
	return listed, nil
}

// setupHint turns the database's "no such table" error for a durable table
// (the program never called Durable.setup on this database), or PostgreSQL's
// "function does not exist" for a durable function (42883: the start looks
// its function up before its table), into one that names the fix; any
// other error is returned as it is.
func setupHint(fn string, err error) error {
	te := task.As(err)
	if te == nil || !strings.Contains(te.Message, "_sky_durable_") {
		return err
	}
	if !strings.Contains(te.Message, "no such table") && !strings.Contains(te.Message, "42P01") && !strings.Contains(te.Message, "42883") {
		return err
	}
	return &task.Error{
		Kind:    te.Kind,
		Message: fn + ": the Std.Durable tables do not exist in this database; hint: call Durable.setup db once (it is idempotent) before start, signal, poll or reading runs",
		Cause:   err,
	}
}

// distinctWorkflows is the poll list without repeats of one workflow; two
// different registrations under one name and version are an InvalidInput
// error, since the runner could only ever advance runs with one of them.
// fn names the call whose list it is ("Durable.poll").
func distinctWorkflows(fn string, listed []skyRegistered) ([]durable.Workflow, error) {
	return distinct(fn+": the list holds", listed)
}

// distinct is distinctWorkflows with the error's subject, what holds the
// two workflows ("Durable.poll: the list holds", "the program defines").
func distinct(holder string, listed []skyRegistered) ([]durable.Workflow, error) {
	type key struct {
		name    string
		version int
	}
	seen := map[key]*registration{}
	var defs []durable.Workflow
	for _, r := range listed {
		k := key{r.w.Name, max(r.w.Version, 1)}
		if prev, ok := seen[k]; ok {
			if prev == r.id {
				continue
			}
			return nil, task.Errorf(task.InvalidInput,
				"%s two different workflows named %q (version %d); hint: give each workflow its own name, or register the new code with Durable.registerVersioned and another version",
				holder, k.name, k.version)
		}
		seen[k] = r.id
		defs = append(defs, r.w)
	}
	return defs, nil
}

// pollOptionsArg reads a Sky PollOptions record.
func pollOptionsArg(v value.Value) (durable.PollOptions, error) {
	const fn = "Durable.pollWith"
	r, ok := v.(*value.Record)
	if !ok {
		return durable.PollOptions{}, value.BadArg(fn, "a PollOptions record { versionPolicy : VersionPolicy }", v)
	}
	p, _ := r.Get("versionPolicy")
	switch c, _ := p.(value.Ctor); c.Name {
	case "PinToStart":
		return durable.PollOptions{Versions: durable.PinToStart}, nil
	case "FailSafe":
		return durable.PollOptions{Versions: durable.FailSafe}, nil
	}
	return durable.PollOptions{}, value.BadArg(fn, "a PollOptions with versionPolicy FailSafe or PinToStart", v)
}

// compact is Durable.compact db retentionMs.
func (b *binding) compact(a []value.Value) (value.Value, error) {
	const fn = "Durable.compact"
	e, err := b.engineArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	ms, ok := a[1].(int64)
	if !ok {
		return nil, value.BadArg(fn, "an Int retention in milliseconds", a[1])
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		if ms < 0 {
			return nil, task.Errorf(task.InvalidInput,
				"%s: a retention of %d ms is negative; hint: the age in milliseconds a finished run's journal is kept, e.g. 30 days: Durable.compact db (30 * 24 * 3600 * 1000)", fn, ms)
		}
		res, err := e.CompactOlderThan(ctx, time.Duration(min(ms, durable.MaxTimerMs))*time.Millisecond, durable.CompactOptions{})
		return res.Runs, setupHint(fn, err)
	})}, nil
}

// stepArgs reads the Ctx, Codec and step id every step kernel takes first.
func stepArgs(fn string, a []value.Value) (*durable.Ctx, skycodec.Codec, string, error) {
	c, err := ctxArg(fn, a[0])
	if err != nil {
		return nil, skycodec.Codec{}, "", err
	}
	cd, err := skycodec.FromValue(a[1])
	if err != nil {
		return nil, skycodec.Codec{}, "", value.BadArg(fn, "a Codec", a[1])
	}
	id, ok := a[2].(string)
	if !ok {
		return nil, skycodec.Codec{}, "", value.BadArg(fn, "a String step id", a[2])
	}
	return c, cd, id, nil
}

func stepKernel(a []value.Value) (value.Value, error) {
	c, cd, id, err := stepArgs("Durable.step", a)
	if err != nil {
		return nil, err
	}
	t, ok := a[3].(value.Task)
	if !ok {
		return nil, value.BadArg("Durable.step", "a Task", a[3])
	}
	if id == "" {
		return emptyName(c, "Durable.step", "step id", `"charge"`), nil
	}
	return value.Task{T: durable.Step(c, cd, id, t.T)}, nil
}

func stepValueKernel(a []value.Value) (value.Value, error) {
	c, cd, id, err := stepArgs("Durable.stepValue", a)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return emptyName(c, "Durable.stepValue", "step id", `"order-id"`), nil
	}
	thunk := a[3]
	compute := task.From(func(context.Context) (value.Value, error) { return value.Apply(thunk, value.Unit{}) })
	return value.Task{T: durable.Step(c, cd, id, compute)}, nil
}

func transactionKernel(a []value.Value) (value.Value, error) {
	c, cd, id, err := stepArgs("Durable.transaction", a)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return emptyName(c, "Durable.transaction", "step id", `"record-order"`), nil
	}
	f := a[3]
	return value.Task{T: durable.Transaction(c, cd, id, func(ctx context.Context, tx *db.DB) (value.Value, error) {
		return task.Run(ctx, value.ApplyTask("Durable.transaction", f, skydb.ToValue(tx)))
	})}, nil
}

func awaitSignalKernel(a []value.Value) (value.Value, error) {
	c, cd, name, err := stepArgs("Durable.awaitSignal", a)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return emptyName(c, "Durable.awaitSignal", "signal name", `"payment.settled"`), nil
	}
	return value.Task{T: durable.AwaitSignal(c, cd, name)}, nil
}

func awaitSignalForKernel(a []value.Value) (value.Value, error) {
	c, cd, name, err := stepArgs("Durable.awaitSignalFor", a)
	if err != nil {
		return nil, err
	}
	ms, ok := a[3].(int64)
	if !ok {
		return nil, value.BadArg("Durable.awaitSignalFor", "an Int timeout in milliseconds", a[3])
	}
	if name == "" {
		return emptyName(c, "Durable.awaitSignalFor", "signal name", `"approved"`), nil
	}
	return value.Task{T: task.Map(durable.AwaitSignalFor(c, cd, name, ms), func(p *value.Value) value.Value {
		if p == nil {
			return value.Nothing
		}
		return value.Just(*p)
	})}, nil
}

// emptyName is the failing task of a durable operation given an empty id or
// signal name: an empty step id cannot be told apart in the journal, and a
// run waiting for signal "" would wait forever (signal refuses that name).
func emptyName(c *durable.Ctx, fn, what, example string) value.Value {
	return value.Task{T: task.Fail[value.Value](task.Errorf(task.InvalidInput,
		"durable run %q: %s with an empty %s; hint: give it a name that says what it is, e.g. %s", c.RunID(), fn, what, example))}
}

// runInfo is a Run as the Sky record RunInfo.
func runInfo(r durable.Run) value.Value {
	output := value.Nothing
	if r.Status == durable.StatusDone {
		output = value.Just(r.Output)
	}
	return value.NewRecord(map[string]value.Value{
		"id":         r.ID,
		"workflow":   r.Workflow,
		"version":    int64(r.Version),
		"status":     string(r.Status),
		"attempts":   int64(r.Attempts),
		"output":     output,
		"lastError":  r.LastError,
		"waitingFor": r.WaitingSignal,
	})
}

// WorkflowsIn picks the workflows among a program's top-level values (each
// WorkflowDef and RegisteredWorkflow, and each one in a top-level list such
// as the `List RegisteredWorkflow` a program hands Durable.worker; one
// workflow once however many values hold it), for `sky durable replay` and
// `sky durable worker`. Two different workflows under one name and version
// are an InvalidInput error.
func WorkflowsIn(vs []value.Value) ([]durable.Workflow, error) {
	var listed []skyRegistered
	for _, v := range vs {
		if l, ok := v.(*value.List); ok {
			for _, item := range l.Slice() {
				listed = appendWorkflow(listed, item)
			}
			continue
		}
		listed = appendWorkflow(listed, v)
	}
	return distinct("the program defines", listed)
}

// appendWorkflow appends v to listed when v is a WorkflowDef or a
// RegisteredWorkflow.
func appendWorkflow(listed []skyRegistered, v value.Value) []skyRegistered {
	o, ok := v.(value.Opaque)
	if !ok {
		return listed
	}
	switch w := o.V.(type) {
	case skyWorkflowDef:
		listed = append(listed, skyRegistered{w: w.def.Erase(), id: w.id})
	case skyRegistered:
		listed = append(listed, w)
	}
	return listed
}
