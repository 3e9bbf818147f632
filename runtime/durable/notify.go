package durable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Wake-up hints. Whenever a run is left unclaimed with a finite wake time —
// `start` inserts it, `signal` wakes a run waiting for that signal, `retry`
// re-queues it, a run suspends on a timer (sleep, backoff) or on a signal
// that already arrived — the store announces it (store.Notifier.WatchHints:
// on PostgreSQL a trigger NOTIFYs in the same transaction, so the hint is
// delivered when the change commits), due now or due in some milliseconds.
// An idle worker watching hints polls at once for the first kind, and when
// the time comes for the second (if it is within MaxHintDelay). A schedule
// declared on PostgreSQL sends a hint with no run id (poll now). The tick
// stays as the fallback, so a lost hint (a dropped connection, a worker
// started after the hint) only costs latency: a tick, or up to quietMax for
// a worker whose last probe found nothing due (quietWindow: it trusts that
// probe while its listener hears nothing). Every watch of a process on a
// database shares one listening session (runtime/db.Listener).
// SKY_DURABLE_NOTIFY=off turns listening (and installing the trigger) off.

// NotifyEnv turns listening for hints on (unset, on, 1, true or yes) or off
// (off, 0, false or no); any other value is an error, so a typo never
// silently leaves a worker listening.
const NotifyEnv = "SKY_DURABLE_NOTIFY"

// MaxHintDelay is the longest delay a listener keeps a timer for; a run due
// later is found by the workers' tick.
const MaxHintDelay = 24 * time.Hour

// HintSettings say whether and where a worker listens for hints.
type HintSettings struct {
	// Off turns listening off (SKY_DURABLE_NOTIFY=off, 0, false or no).
	Off bool
	// URL is the PostgreSQL URL of the dedicated listening connection:
	// SKY_DURABLE_LISTEN_URL (or its older name SKY_DURABLE_NOTIFY_URL),
	// else the database's URL (DATABASE_URL, else SKY_DB_PATH when
	// SKY_DB_DRIVER is postgres) unless that goes through a transaction
	// pooler (SKY_DB_POOLER), which cannot carry LISTEN.
	URL string
	// Own says to listen with the database's own connection settings when
	// URL is empty (see For): a database opened from --db or sky.toml,
	// which the environment does not name.
	Own bool
	// NoURL says why URL is empty, for the worker's report.
	NoURL string
	// Report receives the listener's problems (nil: dropped).
	Report func(string)
}

// noURLPooled is HintSettings.NoURL for a database reached through a
// transaction pooler.
const noURLPooled = "the database URL goes through a transaction pooler, which cannot carry LISTEN (set SKY_DURABLE_LISTEN_URL to a direct URL of the database, or SKY_DURABLE_NOTIFY=off)"

// HintSettingsFromEnv reads HintSettings from the environment through
// getenv (os.Getenv in programs). A NotifyEnv value that is neither on nor
// off is an InvalidInput error naming it and the accepted values.
func HintSettingsFromEnv(getenv func(string) string) (HintSettings, error) {
	switch v := getenv(NotifyEnv); strings.ToLower(strings.TrimSpace(v)) {
	case "off", "0", "false", "no":
		return HintSettings{Off: true}, nil
	case "", "on", "1", "true", "yes":
	default:
		return HintSettings{}, task.Errorf(task.InvalidInput,
			"%s=%q is neither on nor off; hint: leave it unset or use on (1, true, yes) to listen for wake-up hints, off (0, false, no) to poll on the tick only", NotifyEnv, v)
	}
	for _, name := range []string{"SKY_DURABLE_LISTEN_URL", "SKY_DURABLE_NOTIFY_URL"} {
		if url := getenv(name); url != "" {
			return HintSettings{URL: url}, nil
		}
	}
	url := getenv("DATABASE_URL")
	if url == "" && strings.HasPrefix(strings.ToLower(getenv("SKY_DB_DRIVER")), "postgres") {
		url = getenv("SKY_DB_PATH")
	}
	if url == "" {
		return HintSettings{NoURL: "no PostgreSQL URL to listen on (set DATABASE_URL or SKY_DURABLE_LISTEN_URL, or SKY_DURABLE_NOTIFY=off)"}, nil
	}
	if pooler, err := db.ParsePooler(getenv(db.EnvPooler)); err != nil || pooler.Resolve(url) == db.PoolerTransaction {
		return HintSettings{NoURL: noURLPooled}, nil
	}
	return HintSettings{URL: url}, nil
}

// For returns s for a worker or an App on d: when the environment named no
// URL to listen on but d itself can carry LISTEN (PostgreSQL, not through a
// transaction pooler: a database opened from `sky durable worker --db` or
// sky.toml's [database] rather than DATABASE_URL), it listens with d's own
// connection settings (Own) instead of polling on the tick only.
func (s HintSettings) For(d *db.DB) HintSettings {
	switch {
	case s.Off || s.URL != "" || !d.Notifies():
	case d.CanListen():
		s.Own, s.NoURL = true, ""
	default:
		s.NoURL = noURLPooled
	}
	return s
}

// Listens reports whether s listens anywhere: not Off, and a URL or Own.
func (s HintSettings) Listens() bool { return !s.Off && (s.URL != "" || s.Own) }

// ListenForHints watches the hints of d's store, listening on url (the
// process's one session there, shared with every other watch), and calls
// onHint(runID) for each hint until ctx ends: at once for a run due now,
// and when it falls due for a run due later (within MaxHintDelay; the
// timers stop with ctx). Once the watch is in effect, and again each time
// the session is reopened, it calls onHint(""): hints sent before that
// were missed, so the worker should poll. The store installs the hint
// trigger first, and checks that url reaches the same database as d (a
// mismatch is an error: its hints would never come). report receives
// connection problems (the session reconnects by itself; a watch that
// cannot start is tried again, backing off up to 30s); it returns only
// when ctx ends, or with an error on a mismatch, a bad url or a database
// that cannot notify.
func ListenForHints(ctx context.Context, d *db.DB, url string, onHint func(runID string), report func(string)) error {
	return listenForHints(ctx, newStore(d, store.Config{}), url, onHint, report)
}

// listenForHints is ListenForHints on the store s.
func listenForHints(ctx context.Context, s store.Store, url string, onHint func(runID string), report func(string)) error {
	timers := &hintTimers{ctx: ctx, onHint: onHint, pending: map[*time.Timer]bool{}}
	defer timers.stop()
	hint := func(n store.Notice) {
		switch {
		case n.Err != nil:
			report("durable hints: " + n.Err.Error() + "; meanwhile polling on the tick only")
		case n.Missed:
			onHint("")
		case n.DueIn <= 0:
			onHint(n.RunID)
		case n.DueIn <= MaxHintDelay:
			// A few milliseconds past the due time, so the poll finds the
			// run due despite the timer's and the network's jitter.
			timers.after(n.DueIn+hintMargin, n.RunID)
		}
	}
	backoff := time.Second
	for ctx.Err() == nil {
		w, err := s.WatchHints(ctx, url, hint)
		if err == nil {
			onHint("") // hints sent before the watch began were missed
			<-ctx.Done()
			w.Stop()
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		if t := task.As(err); errors.Is(err, store.ErrNoNotifications) || (t != nil && t.Kind == task.InvalidInput) {
			return fmt.Errorf("durable hints: %w", err)
		}
		report(fmt.Sprintf("durable hints: %v; polling on the tick only, retrying in %v", err, backoff))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
	return nil
}

// listen is listenForHints on e's store for Work: while its watch is in
// effect it counts in e.hints.live, and each hint it hears (the catch-up
// hint of a reopened session included) counts in e.hints.heard before
// onHint runs, so Work's quiet polls stop trusting a probe taken before it
// (quietWindow). A problem reported takes it out of effect until the
// session is back.
func (e *Engine) listen(ctx context.Context, url string, onHint func(runID string), report func(string)) error {
	var mu sync.Mutex
	live := false
	set := func(on bool) {
		mu.Lock()
		defer mu.Unlock()
		if live != on {
			live = on
			if on {
				e.hints.live.Add(1)
			} else {
				e.hints.live.Add(-1)
			}
		}
	}
	defer set(false)
	return listenForHints(ctx, e.store, url, func(runID string) {
		// Counted before it is in effect again: a poll that sees the
		// listener back sees that hints may have been missed.
		e.hints.heard.Add(1)
		if runID == "" {
			set(true)
		}
		onHint(runID)
	}, func(problem string) {
		set(false)
		report(problem)
	})
}

// hintMargin is added to a delayed hint's wait.
const hintMargin = 5 * time.Millisecond

// hintTimers are the pending delayed hints of one listener.
type hintTimers struct {
	ctx    context.Context
	onHint func(string)

	mu      sync.Mutex
	pending map[*time.Timer]bool
}

// after calls onHint(runID) after d unless the listener has stopped.
func (h *hintTimers) after(d time.Duration, runID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		h.mu.Lock()
		delete(h.pending, t)
		h.mu.Unlock()
		if h.ctx.Err() == nil {
			h.onHint(runID)
		}
	})
	h.pending[t] = true
}

// stop cancels every pending delayed hint.
func (h *hintTimers) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for t := range h.pending {
		t.Stop()
	}
	clear(h.pending)
}
