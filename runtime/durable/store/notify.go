package store

import (
	"context"
	"errors"
	"time"
)

// Notifier is how the engine hears of changes instead of polling for them.
// Every watch of a process on one database shares one listener
// (runtime/db.Listener: on PostgreSQL one LISTEN session, on SQLite
// in-process), and a watch returns once it is in effect: a waiter watches
// first and then reads what it waits for, so a change committed between the
// two is either seen by the read or heard.
type Notifier interface {
	// WatchDone calls fn when run runID may have finished (done, dead,
	// cancelled, timed out): a Notice naming it, or Missed. It is
	// ErrNoNotifications when the database cannot tell (poll instead).
	WatchDone(ctx context.Context, runID string, fn func(Notice)) (Watch, error)
	// WatchHints calls fn with the wake-up hints: a run became due
	// (RunID, DueIn 0) or will fall due in DueIn. url is where to listen
	// ("": the store's own database). It is ErrNoNotifications when the
	// database cannot tell (poll on the tick).
	WatchHints(ctx context.Context, url string, fn func(Notice)) (Watch, error)
}

// Watch is a watch in effect.
type Watch struct {
	// Stop ends it.
	Stop func()
	// Partial says some changes go unannounced (SQLite hears only this
	// process's): the watcher polls too.
	Partial bool
}

// Notice is what a watch hears. fn runs on the listener's goroutine and
// must not block.
type Notice struct {
	// RunID is the run the notification is about; DueIn, for a hint, is
	// how long until it falls due (0: now).
	RunID string
	DueIn time.Duration
	// Missed says notifications may have been lost (the listener's
	// session was reopened): read again what you wait for.
	Missed bool
	// Err says the listener's session failed; it reconnects, and Missed
	// follows once it is back.
	Err error
}

// ErrNoNotifications is a watch on a database that cannot notify: SQLite
// for hints, PostgreSQL through a transaction pooler.
var ErrNoNotifications = errors.New("store: this database cannot notify")

// Channels the stores notify on: DoneChannel carries the id of a run that
// finished, HintChannel a wake-up hint.
const (
	DoneChannel = "sky_durable_done"
	HintChannel = "sky_durable_wake"
)
