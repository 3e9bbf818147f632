package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// withCLIActor names the operator of the command's actions in the runs'
// histories: "user@host via sky durable".
func withCLIActor(ctx context.Context) context.Context {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return durable.WithActor(ctx, name+"@"+host+" via sky durable")
}

// printHistory prints a run's history, a line an event (a line break in
// an error is printed as \n), saying where the bound dropped events.
func printHistory(out io.Writer, h []durable.HistoryEvent) {
	if len(h) == 0 {
		return
	}
	n := int(h[len(h)-1].Pos)
	fmt.Fprintf(out, "history (%d %s):\n", n, plural(n, "event", "events"))
	for i, e := range h {
		if i > 0 {
			if gap := view.HistoryGap(h[i-1], e); gap != "" {
				fmt.Fprintf(out, "  %s\n", gap)
			}
		}
		fmt.Fprintf(out, "  %s  %s\n", view.Stamp(e.At), view.Safe(view.EventText(e)))
	}
}

// eventOut is the JSON shape of a history event.
type eventOut struct {
	Pos     int64     `json:"pos"`
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Actor   string    `json:"actor"`
	Attempt int       `json:"attempt"`
	Detail  string    `json:"detail,omitempty"`
	Step    string    `json:"step,omitempty"`
}

func historyJSON(h []durable.HistoryEvent) []eventOut {
	out := make([]eventOut, len(h))
	for i, e := range h {
		out[i] = eventOut{Pos: e.Pos, At: e.At, Kind: string(e.Kind), Actor: e.Actor, Attempt: e.Attempt, Detail: e.Detail, Step: e.Step}
	}
	return out
}
