package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"skydurable/compiler/diag"
	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// maxWorkflowsNamed is how many workflow names the note of an unknown
// --workflow lists before it counts the rest.
const maxWorkflowsNamed = 10

// noteUnknownWorkflow is the note on warn after a --workflow filter matched
// no run: when no run of the namespace has that workflow at all (a typo
// reads as "nothing to do" otherwise), it names the workflows that do.
// A workflow that has runs, none matching the other filters, gets no note;
// a name spelt like one of them gets it suggested first.
func noteUnknownWorkflow(ctx context.Context, e *durable.Engine, workflow string, warn io.Writer) {
	if workflow == "" {
		return
	}
	names, err := e.WorkflowNames(ctx)
	if err != nil || slices.Contains(names, workflow) {
		return
	}
	where := "this namespace"
	if e.Namespace() != durable.DefaultNamespace {
		where = "namespace " + e.Namespace()
	}
	if len(names) == 0 {
		fmt.Fprintf(warn, "note: no run of %s has workflow %q; hint: %s has no runs yet\n", where, view.Safe(workflow), where)
		return
	}
	list := names[:min(len(names), maxWorkflowsNamed)]
	for i := range list {
		list[i] = view.Safe(list[i])
	}
	more := ""
	if len(names) > maxWorkflowsNamed {
		more = fmt.Sprintf(" and %d more", len(names)-maxWorkflowsNamed)
	}
	hint := "its workflows are " + strings.Join(list, ", ") + more
	if near := diag.Suggest(workflow, names); len(near) > 0 {
		hint = "did you mean " + view.Safe(strings.Join(near, " or ")) + "? (its workflows: " + strings.Join(list, ", ") + more + ")"
	}
	fmt.Fprintf(warn, "note: no run of %s has workflow %q; hint: %s\n", where, view.Safe(workflow), hint)
}
