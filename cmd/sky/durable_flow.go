package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
)

// `sky durable schedules` lists the schedules (Durable.schedule) with their
// next tick; `sky durable schedule rm ID` deletes one.

func init() {
	registerDurable(durableCommand{
		use: "schedules [--json]", readOnly: true,
		short:   "the schedules (Durable.schedule), with their next tick",
		example: `  sky durable schedules`,
		flags:   durableJSONFlag,
		run:     durableSchedules,
	})
	registerDurable(durableCommand{
		use: "schedule rm ID", args: "rm ID",
		short:          "delete a schedule (the runs it started are kept)",
		example:        `  sky durable schedule rm nightly-report`,
		invalidIsUsage: true,
		run:            durableScheduleRm,
	})
}

func durableSchedules(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	list, err := e.Schedules(ctx)
	if err != nil {
		return err
	}
	if f.json {
		rows := make([]map[string]any, len(list))
		for i, s := range list {
			rows[i] = map[string]any{"id": s.ID, "workflow": s.Workflow, "version": s.Version, "cron": s.Cron, "input": s.Input,
				"catch_up": s.CatchUp, "next_at": s.NextAt.UTC(), "last_run": s.LastRunID}
		}
		return writeJSON(out, rows)
	}
	if len(list) == 0 {
		fmt.Fprintln(out, "no schedules")
		return nil
	}
	now := time.Now()
	tw := newTable(out)
	fmt.Fprintln(tw, "ID\tWORKFLOW\tCRON\tNEXT\tLAST RUN")
	for _, s := range list {
		last := s.LastRunID
		if last == "" {
			last = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (%s)\t%s\n", view.Safe(s.ID), view.Safe(s.Workflow), view.Safe(s.Cron), s.NextAt.UTC().Format(time.RFC3339), view.Until(s.NextAt, now), view.Safe(last))
	}
	return tw.Flush()
}

func durableScheduleRm(ctx context.Context, e *durable.Engine, _ *durableFlags, a []string, out io.Writer) error {
	if a[0] != "rm" {
		return task.Errorf(task.InvalidInput, "unknown schedule subcommand %q; hint: sky durable schedule rm ID (list them with sky durable schedules)", a[0])
	}
	found, err := e.Unschedule(ctx, a[1])
	if err != nil {
		return err
	}
	if !found {
		return task.Errorf(task.NotFound, "no schedule with id %q; hint: list them with sky durable schedules", a[1])
	}
	fmt.Fprintf(out, "schedule %s removed (the runs it started are kept)\n", view.Safe(a[1]))
	return nil
}
