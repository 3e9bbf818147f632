package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// noteUnknownWorkflow is the note on warn after a --workflow filter matched
// no run: when no run of the namespace has that workflow at all (a typo
// reads as "nothing to do" otherwise), it names the workflows that do.
// A workflow that has runs, none matching the other filters, gets no note.
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
	const shown = 10
	list := names[:min(len(names), shown)]
	for i := range list {
		list[i] = view.Safe(list[i])
	}
	more := ""
	if len(names) > shown {
		more = fmt.Sprintf(" and %d more", len(names)-shown)
	}
	fmt.Fprintf(warn, "note: no run of %s has workflow %q; hint: its workflows are %s%s\n", where, view.Safe(workflow), strings.Join(list, ", "), more)
}
