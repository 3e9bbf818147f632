package durable

import (
	"fmt"
	"sort"

	"skydurable/runtime/durable/store"
)

// VersionPolicy says what a worker does with a run whose workflow version it
// does not have (Sky's Durable.VersionPolicy). A run is stamped at Start with
// the version of the Def it was started from (Def.Versioned; 1 by default).
type VersionPolicy int

const (
	// PinToStart (the default, the zero value) claims only runs whose
	// (workflow, version) this worker registered: a run always finishes on
	// the code it started with, and a run of another version is left for a
	// worker that has it. In a rolling deploy old and new workers run side
	// by side, each finishing its own runs. A run whose version no worker
	// has stays waiting (overdue in `sky durable ls`).
	PinToStart VersionPolicy = iota
	// FailSafe claims runs by workflow name; a run whose version this
	// worker did not register fails its attempt with a clear message
	// ("workflow checkout version 3 is not registered in this worker (it
	// has 1, 2)") and is retried with backoff like any failure, so a worker
	// that has the version may pick it up; when no worker has it, it ends
	// dead, retryable with `sky durable retry` once the version is deployed.
	FailSafe
)

// String is the policy's Sky constructor name.
func (p VersionPolicy) String() string {
	if p == FailSafe {
		return "FailSafe"
	}
	return "PinToStart"
}

// registry is the workflows one poll may run, by name then version.
type registry struct {
	byName map[string]map[int]Workflow
	names  []string           // distinct names, in registration order
	keys   []store.VersionKey // distinct (name, version) pairs
	// limited are the names with limits (flow.go), rated those among
	// them with a rate limit.
	limited, rated []string
}

// newRegistry indexes defs; a later Workflow with the same name and version
// replaces an earlier one. A version below 1 counts as 1 (as at Start).
func newRegistry(defs []Workflow) (registry, error) {
	r := registry{byName: map[string]map[int]Workflow{}}
	for _, w := range defs {
		if err := checkWorkflowName(w.Name); err != nil {
			return registry{}, err
		}
		v := max(w.Version, 1)
		vs, ok := r.byName[w.Name]
		if !ok {
			vs = map[int]Workflow{}
			r.byName[w.Name] = vs
			r.names = append(r.names, w.Name)
		}
		if _, dup := vs[v]; !dup {
			r.keys = append(r.keys, store.VersionKey{Name: w.Name, Version: v})
		}
		vs[v] = w
	}
	return r, nil
}

// checkWorkflowName refuses a workflow name that is not a valid name
// (checkName): on PostgreSQL a NUL in one made every poll of the worker
// fail.
func checkWorkflowName(name string) error {
	return checkName("the workflow name", name, nil, "a printable name such as \"checkout\"")
}

// lookup finds the workflow of a claimed run.
func (r registry) lookup(name string, version int) (Workflow, bool) {
	w, ok := r.byName[name][max(version, 1)]
	return w, ok
}

// newest is the highest version registered under name; its retry policy
// governs a run whose own version is missing.
func (r registry) newest(name string) Workflow {
	vs := sortedVersions(r.byName[name])
	if len(vs) == 0 {
		return Workflow{Name: name}
	}
	return r.byName[name][vs[len(vs)-1]]
}

func sortedVersions(vs map[int]Workflow) []int {
	out := make([]int, 0, len(vs))
	for v := range vs {
		out = append(out, v)
	}
	sort.Ints(out)
	return out
}

// versionMissing is the last_error of a run whose version this worker lacks.
func versionMissing(name string, version int, has map[int]Workflow) string {
	return fmt.Sprintf("workflow %s version %d is not registered in this worker (it has %s); "+
		"hint: deploy a worker that registers version %d (Durable.registerVersioned), or poll with PinToStart so such runs wait for one",
		name, version, describeVersions(sortedVersions(has)), version)
}
