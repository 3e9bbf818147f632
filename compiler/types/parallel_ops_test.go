package types

import (
	"slices"
	"testing"

	"skydurable/compiler/syntax"
)

// sequentialTasks are the Sky.Core.Task functions that take a list of Tasks
// and run them one after another, so the parallel rule leaves them alone.
var sequentialTasks = []string{"sequence"}

// TestTaskListCombinatorsAreClassified enumerates Task.sky's exposed
// values: each that takes a list of Tasks must be in concurrentTasks (with
// the index of that list) or in sequentialTasks, so a combinator added
// later fails the test until whoever adds it says whether it runs its
// Tasks side by side.
func TestTaskListCombinatorsAreClassified(t *testing.T) {
	prog, info := checkedStdlib(t)
	taking := map[string]int{}
	for _, it := range prog.Modules[taskModule].Exposing.Items {
		if it.Kind != syntax.ExposeValue {
			continue
		}
		params, _ := uncurry(info.Values[taskModule][it.Name].Scheme.Type)
		for i, p := range params {
			if l, ok := unalias(p).(*Con); ok && l.Name == "List" && len(l.Args) == 1 && isCon(l.Args[0], "Task") {
				taking[it.Name] = i
			}
		}
	}
	for name, i := range taking {
		at, concurrent := concurrentTasks[name]
		switch {
		case concurrent && at != i:
			t.Errorf("Task.%s takes its Tasks as argument %d, concurrentTasks says %d", name, i, at)
		case !concurrent && !slices.Contains(sequentialTasks, name):
			t.Errorf("Task.%s takes a list of Tasks: add it to concurrentTasks if it runs them side by side, else to sequentialTasks", name)
		}
	}
	for name := range concurrentTasks {
		if _, ok := taking[name]; !ok {
			t.Errorf("concurrentTasks lists %s, which Sky.Core.Task does not expose as taking a list of Tasks", name)
		}
	}
}
