package durable

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/task"
)

// RetryPolicy says how often a failing run is retried and how long it waits
// between attempts. Zero fields take the defaults of DefaultRetryPolicy.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts before the run is dead
	// (default 5). Attempts are counted at claim, so a crash counts.
	MaxAttempts int
	// InitialBackoff is the wait after the first failure (default 1s).
	InitialBackoff time.Duration
	// MaxBackoff caps the wait (default 5m).
	MaxBackoff time.Duration
	// Multiplier grows the wait after each failure (default 2).
	Multiplier float64
	// Jitter is the fraction of the wait that is randomised, in [0,1]
	// (default 0.2; a negative value means none): the wait is scaled by
	// a factor in [1-Jitter, 1].
	Jitter float64
}

// DefaultRetryPolicy is the policy of Register: 5 attempts, backoff 1s
// doubling up to 5m, 20% jitter.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Second, MaxBackoff: 5 * time.Minute, Multiplier: 2, Jitter: 0.2}

// WithDefaults fills zero fields from DefaultRetryPolicy.
func (p RetryPolicy) WithDefaults() RetryPolicy {
	d := DefaultRetryPolicy
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = d.InitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = d.MaxBackoff
	}
	if p.Multiplier < 1 {
		p.Multiplier = d.Multiplier
	}
	switch {
	case p.Jitter == 0:
		p.Jitter = d.Jitter
	case p.Jitter > 1:
		p.Jitter = 1
	}
	return p
}

// Backoff is the wait after the given failed attempt (1-based): InitialBackoff
// × Multiplier^(attempt-1), capped at MaxBackoff, then scaled down by up to
// Jitter using r (a number in [0,1) from the engine's injected source).
func (p RetryPolicy) Backoff(attempt int, r float64) time.Duration {
	p = p.WithDefaults()
	if attempt < 1 {
		attempt = 1
	}
	d := float64(p.InitialBackoff) * math.Pow(p.Multiplier, float64(attempt-1))
	if d > float64(p.MaxBackoff) || math.IsInf(d, 0) || math.IsNaN(d) {
		d = float64(p.MaxBackoff)
	}
	if p.Jitter > 0 {
		d *= 1 - p.Jitter*r
	}
	return time.Duration(d)
}

// Workflow is a registered workflow in type-erased form (Sky's
// RegisteredWorkflow): the runner dispatches on Name and calls Body with the
// run's input JSON; Body yields the output JSON.
type Workflow struct {
	Name string
	// Version is recorded on each run started from this workflow.
	Version int
	Retry   RetryPolicy
	// Limits is the workflow's flow control (flow.go); nil for none.
	Limits *Limits
	Body   func(c *Ctx, input string) task.Task[string]
}

// Def is a typed workflow (Sky's WorkflowDef i o). Start encodes the input
// with its input codec; Erase gives the runner's form.
type Def[I, O any] struct {
	name    string
	version int
	retry   RetryPolicy
	limits  *Limits
	in      codec.Codec[I]
	out     codec.Codec[O]
	body    func(*Ctx, I) task.Task[O]
}

// Register defines a workflow with the default retry policy.
func Register[I, O any](name string, in codec.Codec[I], out codec.Codec[O], body func(*Ctx, I) task.Task[O]) Def[I, O] {
	return RegisterWith(DefaultRetryPolicy, name, in, out, body)
}

// RegisterWith defines a workflow with its own retry policy.
func RegisterWith[I, O any](policy RetryPolicy, name string, in codec.Codec[I], out codec.Codec[O], body func(*Ctx, I) task.Task[O]) Def[I, O] {
	return Def[I, O]{name: name, version: 1, retry: policy.WithDefaults(), in: in, out: out, body: body}
}

// Versioned returns d with another version number (recorded on new runs).
func (d Def[I, O]) Versioned(version int) Def[I, O] {
	d.version = version
	return d
}

// Name is the workflow's registered name.
func (d Def[I, O]) Name() string { return d.name }

// Erase is the type-erased form the runner holds (Sky's Durable.erase). Its
// body decodes the input (an undecodable input is a Decode error naming the
// run and workflow), runs the typed body and encodes the output.
func (d Def[I, O]) Erase() Workflow {
	return Workflow{
		Name:    d.name,
		Version: d.version,
		Retry:   d.retry,
		Limits:  d.limits,
		Body: func(c *Ctx, input string) task.Task[string] {
			return task.From(func(ctx context.Context) (string, error) {
				in, err := d.in.Decode(input)
				if err != nil {
					return "", task.Errorf(task.Decode,
						"durable run %q of workflow %q: its input %s does not decode: %s; hint: the input codec changed since the run started",
						c.RunID(), d.name, codec.Preview(input), errText(err))
				}
				out, err := task.Run(ctx, d.body(c, in))
				if err != nil {
					return "", err
				}
				js, err := d.out.Encode(out)
				if err != nil {
					return "", task.Errorf(task.InvalidInput, "durable run %q of workflow %q: its output does not encode: %s", c.RunID(), d.name, errText(err))
				}
				return js, nil
			})
		},
	}
}

// Lookup finds the workflow called name among defs; an unknown name is a
// NotFound error listing the known ones.
func Lookup(defs []Workflow, name string) (Workflow, error) {
	names := make([]string, 0, len(defs))
	for _, w := range defs {
		if w.Name == name {
			return w, nil
		}
		names = append(names, fmt.Sprintf("%q", w.Name))
	}
	sort.Strings(names)
	names = slices.Compact(names) // a workflow registered in several versions is named once
	return Workflow{}, task.Errorf(task.NotFound,
		"durable: no workflow named %q is registered; known workflows: %s; hint: register it and pass it to start and poll",
		name, strings.Join(names, ", "))
}
