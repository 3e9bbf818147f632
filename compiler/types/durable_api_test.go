package types

import (
	"maps"
	"slices"
	"testing"

	"skydurable/compiler/ffi"
	"skydurable/compiler/syntax"
)

// durableExports is what every value Std.Durable exposes is to the workflow
// rules. A new export fails the test until it is added here, so whoever adds
// it decides whether the rules' derivation (classifyDurable) is right for
// it: a durable operation needs an entry in stepIDs too.
var durableExports = map[string]durableKind{
	"register": durableBodyTaking, "registerWith": durableBodyTaking, "registerVersioned": durableBodyTaking,
	"registerWithLimits": durableBodyTaking,

	"step": durableOperation, "stepValue": durableOperation, "transaction": durableOperation,
	"sleep": durableOperation, "sleepAs": durableOperation, "awaitSignal": durableOperation,
	"awaitSignalFor": durableOperation, "startChild": durableOperation, "awaitChild": durableOperation,
	"all": durableOperation, "setEvent": durableOperation,

	"setup": durableEffect, "start": durableEffect, "startWith": durableEffect, "signal": durableEffect,
	"poll": durableEffect, "pollWith": durableEffect, "worker": durableEffect, "schedule": durableEffect,
	"scheduleWith": durableEffect, "unschedule": durableEffect, "status": durableEffect,
	"describe": durableEffect, "cancel": durableEffect, "retry": durableEffect, "compact": durableEffect,
	"fork":         durableEffect,
	"saveSnapshot": durableEffect, "loadSnapshot": durableEffect, "saveSnapshotIfNewer": durableEffect,
	"saveSnapshotAuto": durableEffect, "result": durableEffect, "awaitResult": durableEffect,
	"getEvent": durableEffect, "signalWithStart": durableEffect,

	"defaultPollOptions": durablePure, "defaultStartOptions": durablePure, "defaultWorkerOptions": durablePure,
	"defaultRetry": durablePure, "noLimits": durablePure, "erase": durablePure, "isSuspend": durablePure,
	"permanent": durablePure, "isPermanent": durablePure, "conn": durablePure, "runId": durablePure,
	"idempotencyKey": durablePure, "restoreCmd": durablePure, "snapshotCmd": durablePure,
	"applyRestore": durablePure,
}

// TestDurableExportsAreClassified enumerates Durable.sky's exposed values:
// each must be listed in durableExports with the kind the rules derive from
// its type, and the durable operations must be exactly stepIDs' keys.
func TestDurableExportsAreClassified(t *testing.T) {
	prog, info := checkedStdlib(t)
	var ops, exposed []string
	for _, it := range prog.Modules[durableModule].Exposing.Items {
		if it.Kind != syntax.ExposeValue {
			continue
		}
		exposed = append(exposed, it.Name)
		got := classifyDurable(info.Values[durableModule][it.Name].Scheme.Type)
		want, listed := durableExports[it.Name]
		switch {
		case !listed:
			t.Errorf("Durable.%s is new: add it to durableExports (the rules make it %q)", it.Name, got)
		case got != want:
			t.Errorf("Durable.%s: the rules make it %q, durableExports says %q", it.Name, got, want)
		}
		if got == durableOperation {
			ops = append(ops, it.Name)
		}
	}
	for name := range durableExports {
		if !slices.Contains(exposed, name) {
			t.Errorf("durableExports lists %s, which Std.Durable does not expose", name)
		}
	}
	slices.Sort(ops)
	if ids := slices.Sorted(maps.Keys(stepIDs)); !slices.Equal(ops, ids) {
		t.Errorf("the durable operations are %v, stepIDs has %v", ops, ids)
	}
}

// checkedStdlib is the standard library's modules, parsed and checked.
func checkedStdlib(t *testing.T) (*Program, *Info) {
	t.Helper()
	prog := &Program{Modules: map[string]*syntax.File{}, Sources: map[string]string{}}
	for name, src := range ffi.Modules() {
		f, err := syntax.ParseFile(name+".sky", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		prog.Modules[name] = f
	}
	info, errs := Check(prog)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return prog, info
}
