package view

import (
	"testing"
	"time"

	"skydurable/runtime/durable/store"
)

// TestWakeText: a run parked on a signal says "timeout" only while its due
// time is ahead (only a timeout sets one); a due run says it is due, and
// with its mailbox at hand whether the signal it awaits arrived.
func TestWakeText(t *testing.T) {
	now := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	parked := store.Run{Status: store.StatusWaiting, WaitingSignal: "approve"}
	woken := parked
	woken.WakeAt = now.Add(-2 * time.Second) // the signal made it due
	withTimeout := parked
	withTimeout.WakeAt = now.Add(26 * time.Hour)
	child := store.Run{Status: store.StatusWaiting, WaitingSignal: "sky:child:c-1", WakeAt: now.Add(-time.Minute)}
	arrived := []store.SignalInfo{{Name: "approve", Payload: `"yes"`}}
	consumed := []store.SignalInfo{{Name: "approve", Payload: `"yes"`, Delivered: true}}
	for _, c := range []struct {
		name    string
		r       store.Run
		mailbox []store.SignalInfo
		want    string
	}{
		{"parked, no timeout", parked, nil, "waiting for approve"},
		{"parked with a timeout ahead", withTimeout, nil, "waiting for approve (timeout in 26h)"},
		{"woken, mailbox unknown", woken, nil, "waiting for approve, due 2s ago"},
		{"woken by its signal", woken, arrived, "approve arrived, due 2s ago"},
		{"due, the signal of that name already consumed", woken, consumed, "waiting for approve, due 2s ago"},
		{"due at this very moment", store.Run{Status: store.StatusWaiting, WaitingSignal: "approve", WakeAt: now}, arrived, "approve arrived, due now"},
		{"a parent whose child finished", child, nil, "waiting for child c-1, due 1m ago"},
		{"sleeping", store.Run{Status: store.StatusWaiting, WakeAt: now.Add(2 * time.Hour)}, nil, "in 2h"},
		// A time to come is rounded to the nearest unit, at least 1s: a
		// one-hour sleep just begun is "in 1h", a backoff of 300 ms "in 1s".
		{"an hour's sleep just begun", store.Run{Status: store.StatusWaiting, WakeAt: now.Add(time.Hour - time.Millisecond)}, nil, "in 1h"},
		{"a retry's short backoff", store.Run{Status: store.StatusFailed, WakeAt: now.Add(300 * time.Millisecond)}, nil, "in 1s"},
		{"three hours less a second", store.Run{Status: store.StatusWaiting, WakeAt: now.Add(3*time.Hour - time.Second)}, nil, "in 3h"},
		{"a day and a half", store.Run{Status: store.StatusWaiting, WakeAt: now.Add(36 * time.Hour)}, nil, "in 36h"},
		{"three days less a minute", store.Run{Status: store.StatusWaiting, WakeAt: now.Add(72*time.Hour - time.Minute)}, nil, "in 3d"},
		{"running", store.Run{Status: store.StatusRunning, WakeAt: now.Add(time.Minute)}, nil, "running"},
		{"cancelled", store.Run{Status: store.StatusCancelled, WaitingSignal: "approve"}, arrived, "-"},
		{"dead", store.Run{Status: store.StatusDead, WakeAt: now}, nil, "-"},
	} {
		if got := WakeTextIn(c.r, c.mailbox, now); got != c.want {
			t.Errorf("%s: WakeTextIn = %q, want %q", c.name, got, c.want)
		}
		if c.mailbox == nil {
			if got := WakeText(c.r, now); got != c.want {
				t.Errorf("%s: WakeText = %q, want %q", c.name, got, c.want)
			}
		}
	}
}

// TestSignalStateOf: consumed once an awaitSignal took it; otherwise
// pending while its run may still take it (a dead run may be retried) and
// an orphan once the run is finished.
func TestSignalStateOf(t *testing.T) {
	pending := store.SignalInfo{Name: "approve"}
	consumed := store.SignalInfo{Name: "approve", Delivered: true}
	for _, c := range []struct {
		si   store.SignalInfo
		run  store.Status
		want SignalState
	}{
		{pending, store.StatusWaiting, SignalPending},
		{pending, store.StatusRunning, SignalPending},
		{pending, store.StatusFailed, SignalPending},
		{pending, store.StatusDead, SignalPending},
		{pending, store.StatusDone, SignalOrphan},
		{pending, store.StatusCancelled, SignalOrphan},
		{pending, store.StatusTimedOut, SignalOrphan},
		{consumed, store.StatusRunning, SignalConsumed},
		{consumed, store.StatusDone, SignalConsumed},
	} {
		if got := SignalStateOf(c.si, c.run); got != c.want {
			t.Errorf("SignalStateOf(delivered=%v, run %s) = %s, want %s", c.si.Delivered, c.run, got, c.want)
		}
	}
}

// TestSealedPayloadsNameTheirKey: a value sealed with a key the reader
// lacks reads "encrypted (key k1)" wherever a payload is shown.
func TestSealedPayloadsNameTheirKey(t *testing.T) {
	sealed := "skyenc1:k1:bm90IHJlYWxseSBjaXBoZXJ0ZXh0"
	for name, got := range map[string]string{
		"Payload": Payload(sealed), "Pretty": Pretty(sealed, 10), "WakeAt": WakeAt(sealed),
	} {
		if got != "encrypted (key k1)" {
			t.Errorf("%s(sealed) = %q, want \"encrypted (key k1)\"", name, got)
		}
	}
	if got := Payload(`{"a":1}`); got != `{"a":1}` {
		t.Errorf("Payload(plain) = %q, want it as it is", got)
	}
}
