package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/durable"
)

// The renderings of `sky durable ls` and `show` at a fixed now: relative
// wake times, the lease holder, elided long values, compaction.
func TestDurableViews(t *testing.T) {
	now := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	runs := []durable.Run{
		{ID: "sleepy", Workflow: "w", Version: 2, Status: durable.StatusWaiting, WakeAt: now.Add(2 * time.Hour), UpdatedAt: now.Add(-5 * time.Second)},
		{ID: "late", Workflow: "w", Version: 1, Status: durable.StatusWaiting, WakeAt: now.Add(-3 * time.Minute), UpdatedAt: now.Add(-3 * 24 * time.Hour)},
		{ID: "parked", Workflow: "w", Version: 1, Status: durable.StatusWaiting, WaitingSignal: "approve", UpdatedAt: now},
		{ID: "timed", Workflow: "w", Version: 1, Status: durable.StatusWaiting, WaitingSignal: "approve", WakeAt: now.Add(26 * time.Hour), UpdatedAt: now},
		{ID: "busy", Workflow: "w", Version: 1, Status: durable.StatusRunning, Attempts: 2, UpdatedAt: now},
		{ID: "bad", Workflow: "w", Version: 1, Status: durable.StatusDead, Attempts: 5, LastError: strings.Repeat("provider down ", 10), UpdatedAt: now},
	}
	var out bytes.Buffer
	printRunTable(&out, runs, nil, now)
	for _, want := range []string{
		"sleepy  w         2        waiting  0         in 2h ",
		"late    w         1        waiting  0         due 3m ago ",
		"waiting for approve ",
		"waiting for approve (timeout in 26h)",
		"busy    w         1        running  2         running ",
		"5s ago", "3d ago",
		"provider down provider down provider down provider down pro…",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("ls output lacks %q:\n%s", want, out.String())
		}
	}

	busy := durable.Run{ID: "busy", Workflow: "w", Version: 1, Status: durable.StatusRunning, Attempts: 2,
		ClaimedBy: "host-7-ab12", ClaimedAt: now.Add(-time.Minute), CreatedAt: now.Add(-time.Hour), UpdatedAt: now,
		Input: `{"items":[` + strings.Repeat(`"sku",`, 40) + `"last"]}`}
	journal := []durable.JournalEntry{
		{Seq: 1, StepID: "reserve", Kind: durable.KindStep, Result: `"r-1"`, CreatedAt: now.Add(-59 * time.Minute)},
		{Seq: 2, StepID: "sleep:1", Kind: durable.KindSleep, Result: `{"wakeAt":` + strconv.FormatInt(now.Add(time.Hour).UnixMilli(), 10) + `}`, CreatedAt: now.Add(-58*time.Minute - 500*time.Millisecond)},
		{Seq: 3, StepID: "signal:go", Kind: durable.KindTimeout, Result: `null`, CreatedAt: now.Add(-time.Minute)},
	}
	out.Reset()
	printRun(&out, busy, journal, nil, nil, nil, now)
	for _, want := range []string{
		"  lease:     held by host-7-ab12 since 2030-01-02 11:59:00.000Z",
		"  attempts:  2",
		"… (36 more lines)",
		"    1  2030-01-02 11:01:00.000Z  +1m0s    step  reserve\n         \"r-1\"",
		"    2  2030-01-02 11:01:59.500Z  +59.5s   sleep  sleep:1\n         wakes at 2030-01-02 13:00:00.000Z",
		"timed out with no signal",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show output lacks %q:\n%s", want, out.String())
		}
	}

	done := durable.Run{ID: "old", Workflow: "w", Version: 1, Status: durable.StatusDone, Output: `"ok"`, CompactedAt: now}
	out.Reset()
	printRun(&out, done, nil, nil, nil, nil, now)
	for _, want := range []string{"  output:    \"ok\"", "  compacted: 2030-01-02 12:00:00.000Z (journal and signals deleted)", "journal: compacted"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show output lacks %q:\n%s", want, out.String())
		}
	}
}
