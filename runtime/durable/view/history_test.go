package view

import (
	"testing"

	"skydurable/runtime/durable/store"
)

func TestEventText(t *testing.T) {
	for _, c := range []struct {
		e    store.Event
		want string
	}{
		{store.Event{Kind: store.EventClaimed, Actor: "w-2", Attempt: 2}, "claimed by w-2 (attempt 2)"},
		{store.Event{Kind: store.EventReclaimed, Actor: "w-2", Attempt: 2, Detail: "w-1"}, "reclaimed by w-2 from w-1, whose lease ran out (attempt 2)"},
		{store.Event{Kind: store.EventSuspended, Actor: "w-1", Attempt: 1, Detail: `signal "go"`}, `suspended by w-1 on signal "go" (attempt 1)`},
		{store.Event{Kind: store.EventFailed, Actor: "w-1", Attempt: 1, Detail: "Unavailable:\n down", Step: "charge"}, "failed by w-1 at step \"charge\" (attempt 1): Unavailable:\n down"},
		{store.Event{Kind: store.EventReleased, Actor: "ann@box via sky durable", Attempt: 1, Detail: "w-1"}, "released by ann@box via sky durable from w-1 (attempt 1)"},
		{store.Event{Kind: store.EventReleased, Actor: "w-1", Attempt: 1}, "released by w-1 (attempt 1)"},
		{store.Event{Kind: store.EventSignalReplaced, Actor: "api", Detail: "go"}, `signal_replaced by api: signal "go"`},
		{store.Event{Kind: store.EventForked, Actor: "api", Detail: "order-1", Step: "b"}, `forked by api from order-1 at step "b"`},
		{store.Event{Kind: store.EventRewound, Actor: "api", Step: "b"}, `rewound by api to step "b"`},
		{store.Event{Kind: store.EventTimedOut, Actor: "deadline", Attempt: 1, Detail: "the deadline passed"}, "timed_out by deadline (attempt 1): the deadline passed"},
	} {
		if got := EventText(c.e); got != c.want {
			t.Errorf("EventText(%+v) = %q, want %q", c.e, got, c.want)
		}
	}
	if got := HistoryGap(store.Event{Pos: 20}, store.Event{Pos: 33}); got != "… 12 events not kept (a run keeps its first 20 and last 80) …" {
		t.Errorf("HistoryGap = %q", got)
	}
	if got := HistoryGap(store.Event{Pos: 3}, store.Event{Pos: 4}); got != "" {
		t.Errorf("HistoryGap of neighbours = %q, want none", got)
	}
}
