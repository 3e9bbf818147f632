package store

import "testing"

// TestMachine pins the run state machine: which statuses are finished, and
// a few edges on each side of the line.
func TestMachine(t *testing.T) {
	for _, s := range AllStatuses {
		if !s.Valid() {
			t.Errorf("%s is not Valid", s)
		}
		want := s == StatusDone || s == StatusCancelled || s == StatusTimedOut
		if Terminal(s) != want {
			t.Errorf("Terminal(%s) = %v, want %v", s, !want, want)
		}
	}
	if Status("paused").Valid() {
		t.Error(`"paused" is Valid`)
	}
	for _, c := range []struct {
		op       Op
		from, to Status
		want     bool
	}{
		{OpClaim, StatusWaiting, StatusRunning, true},
		{OpClaim, StatusRunning, StatusRunning, true}, // an expired lease
		{OpClaim, StatusDead, StatusRunning, false},
		{OpRetry, StatusDead, StatusWaiting, true},
		{OpRetry, StatusWaiting, StatusWaiting, false},
		{OpCancel, StatusDone, StatusCancelled, false},
		{OpCancel, StatusFailed, StatusCancelled, true},
		{OpRelease, StatusRunning, StatusFailed, true},
		{OpComplete, StatusWaiting, StatusDone, false},
		{OpTimeOut, StatusWaiting, StatusTimedOut, true},
		{OpTimeOut, StatusDead, StatusTimedOut, false},
		{OpCancel, StatusTimedOut, StatusCancelled, false},
	} {
		if got := Allowed(c.op, c.from, c.to); got != c.want {
			t.Errorf("Allowed(%s, %s, %s) = %v, want %v", c.op, c.from, c.to, got, c.want)
		}
	}
	for _, tr := range Machine {
		for _, from := range append(tr.From, tr.To) {
			if !from.Valid() {
				t.Errorf("%s lists the unknown status %q", tr.Op, from)
			}
		}
	}
}
