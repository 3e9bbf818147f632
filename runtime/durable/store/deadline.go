package store

import "time"

// DeadlineMs is the statement parameter of a run's deadline (NewRun.Deadline)
// in milliseconds: NULL when it has none, so deadline_at stays NULL.
func DeadlineMs(d time.Duration) any {
	if d <= 0 {
		return nil
	}
	return d.Milliseconds()
}
