package main

import (
	"fmt"
	"io"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// printChildren prints the children of run id under `sky durable show`.
func printChildren(out io.Writer, id string, children []durable.Run, held map[string]durable.Hold, now time.Time) {
	if len(children) == 0 {
		return
	}
	more := ""
	if len(children) == view.ShowChildren {
		more = fmt.Sprintf(", the newest %d; sky durable ls --parent %s lists all", view.ShowChildren, view.Safe(id))
	}
	fmt.Fprintf(out, "children (%d%s):\n", len(children), more)
	tw := newTable(out)
	for _, c := range children {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", view.Safe(c.ID), view.Safe(c.Workflow), c.Status, view.Safe(view.WakeOrHeld(c, held, now)))
	}
	tw.Flush()
}
