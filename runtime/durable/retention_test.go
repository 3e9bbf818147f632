package durable

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestRetentionCompactsFinishedRunsOncePerCluster: with Options.Retention
// the workers' polls compact the finished runs past it (journal and
// signals gone, rows kept), one worker per RetentionEvery across the
// cluster, and delete the orphan signals older than the TTL; runs inside
// the retention, live runs and the signals of existing runs stay.
func TestRetentionCompactsFinishedRunsOncePerCluster(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		w := stepThenSignal(cnt)
		defs := []Workflow{w.Erase()}
		retain := func(o *Options) { o.Retention = 30 * 24 * time.Hour; o.OrphanSignalTTL = 7 * 24 * time.Hour }
		a, b := h.engine("A", retain), h.engine("B", retain)

		for i := range 3 {
			id := fmt.Sprintf("old-%d", i)
			h.start(w, id, "ok")
			h.signal(id, "go", `"!"`)
		}
		h.start(w, "live", "ok")
		h.signal("typo", "go", `"lost"`) // no run will ever have this id
		h.drain(h.e, defs...)
		h.wantStatus("old-0", StatusDone)
		h.wantStatus("live", StatusWaiting)

		h.clock.Advance(31 * 24 * time.Hour)
		h.start(w, "recent", "ok")
		h.signal("recent", "go", `"!"`)
		h.drain(h.e, defs...)

		// A's polls: the first starts its period (an engine does no
		// retention work at its first poll: TestRoundTrips counts it), one a
		// period later takes the cluster's turn and does the work; B's, in
		// the same period, finds the turn taken.
		if _, err := a.PollWith(h.ctx, defs, PollOptions{MaxRuns: 1}); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(RetentionEvery)
		if _, err := a.PollWith(h.ctx, defs, PollOptions{MaxRuns: 1}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"old-0", "old-1", "old-2"} {
			r, journal, err := h.e.Describe(h.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != StatusDone || len(journal) != 0 || r.CompactedAt.IsZero() {
				t.Errorf("%s after retention: status %s, %d journal rows, compacted %v; want done, 0 rows, compacted", id, r.Status, len(journal), r.CompactedAt)
			}
		}
		for _, id := range []string{"recent", "live"} {
			if _, journal, err := h.e.Describe(h.ctx, id); err != nil || len(journal) == 0 {
				t.Errorf("%s after retention: journal %v, %v; want it kept", id, journal, err)
			}
		}
		orphans, err := h.e.OrphanSignals(h.ctx, 10)
		if err != nil || len(orphans) != 0 {
			t.Errorf("orphan signals after retention = %v, %v; want the 31-day-old one deleted", orphans, err)
		}
		if res, err := b.RunRetention(h.ctx); err != nil || res.Turn {
			t.Errorf("B's retention in the same period = %+v, %v; want no turn", res, err)
		}
		h.clock.Advance(RetentionEvery)
		if res, err := b.RunRetention(h.ctx); err != nil || !res.Turn || res.Runs != 0 {
			t.Errorf("B's retention a period later = %+v, %v; want the turn, nothing left to compact", res, err)
		}
	})
}

// TestParseAge: the ages of --older-than and [durable] retention.
func TestParseAge(t *testing.T) {
	for text, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "720h": 720 * time.Hour, "90m": 90 * time.Minute, "0d": 0, " 7d ": 7 * 24 * time.Hour} {
		if got, err := ParseAge("x", text); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for text, why := range map[string]string{
		"":                      "is empty",
		"-1d":                   "not a duration",
		"-5h":                   "not a duration",
		"soon":                  "not a duration",
		"106752d":               "too long",
		"99999999999999999999d": "too long",
		"9999999999h":           "too long",
	} {
		_, err := ParseAge("--older-than", text)
		if err == nil || !strings.Contains(err.Error(), why) || task.As(err).Kind != task.InvalidInput {
			t.Errorf("ParseAge(%q) = %v; want an InvalidInput error saying %q", text, err, why)
		}
	}
}
