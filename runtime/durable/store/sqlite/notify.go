package sqlite

import (
	"context"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// Notifications on SQLite are in-process (SQLite has no NOTIFY): the
// store tells the DB's db.Listener when a run it finished has committed,
// so a waiter in the same process wakes at once. Finishes written by other
// processes, and descendants cancelled with their ancestor, are not
// announced: a waiter on SQLite also polls. There are no wake-up hints:
// workers poll on their tick.

// WatchDone watches store.DoneChannel for runID on the DB's in-process
// Listener.
func (s *Store) WatchDone(ctx context.Context, runID string, fn func(store.Notice)) (store.Watch, error) {
	l, err := s.d.Listener("")
	if err != nil {
		return store.Watch{}, err
	}
	stop, err := l.Subscribe(ctx, store.DoneChannel, runID, func(n db.Notice) {
		fn(store.Notice{RunID: n.Payload, Missed: n.Missed, Err: n.Err})
	})
	return store.Watch{Stop: stop, Partial: true}, err
}

// WatchHints is store.ErrNoNotifications: SQLite workers poll on their tick.
func (s *Store) WatchHints(context.Context, string, func(store.Notice)) (store.Watch, error) {
	return store.Watch{}, store.ErrNoNotifications
}

// finished announces runs that finished, once their change committed (at
// once outside a transaction; inside the caller's, the waiter's poll finds
// them).
func (s *Store) finished(ctx context.Context, ids ...string) {
	if s.d.JoinsTransaction(ctx) {
		return
	}
	l, err := s.d.Listener("")
	if err != nil {
		return
	}
	for _, id := range ids {
		l.Notify(store.DoneChannel, id)
	}
}
