package store

import "time"

// Stats are the figures of the dashboard's overview and `sky durable
// stats`: what an operator looks at first.
type Stats struct {
	// Now is the clock reading the figures are relative to.
	Now time.Time
	// Counts is the number of runs per workflow and status, sorted by
	// workflow then status; pairs with no run are absent.
	Counts []StatusCount
	// Started and Finished count the runs created, and the runs that
	// ended done, dead, cancelled or timed out, in each of the last len minutes:
	// index 0 is the minute ending at Now, the last the oldest.
	Started, Finished []int
	// OldestDue is the run that has been due the longest without a worker
	// claiming it, among the runs no limit holds back (nil when none is
	// due); its age is Now - WakeAt. Held counts the due runs a limit
	// holds back (flow control): they wait for their limit, not a worker.
	OldestDue *DueRun
	Held      int
	// Stuck are runs whose worker's lease expired without the run moving
	// on (the worker died or hangs), the longest expired first, at most
	// StuckLimit of them; StuckCount counts them all.
	Stuck      []DueRun
	StuckCount int
}

// StuckLimit caps the stuck runs Stats lists.
const StuckLimit = 20

// StatusCount is the number of runs of one workflow in one status.
type StatusCount struct {
	Workflow string
	Status   Status
	N        int
}

// DueRun is a run that is due (or whose lease ended) at WakeAt.
type DueRun struct {
	ID, Workflow string
	WakeAt       time.Time
	// ClaimedBy is the worker whose lease ended (stuck runs only).
	ClaimedBy string
}

// Buckets turns (minutes ago, count) rows into a per-minute series of n
// minutes, newest first; rows outside the window are dropped.
func Buckets(n int, rows [][2]int) []int {
	out := make([]int, n)
	for _, r := range rows {
		if r[0] >= 0 && r[0] < n {
			out[r[0]] += r[1]
		}
	}
	return out
}
