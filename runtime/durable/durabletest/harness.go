// Package durabletest lets users test their own durable workflows (as
// riverqueue's rivertest does for jobs): a Harness is a fresh SQLite database
// with a virtual clock, so a 30-day sleep is advanced in milliseconds, and
// CrashEverywhere kills the worker at every journal boundary of a run in turn
// and checks that the resumed run ends as the crash-free one did. The Sky
// module Std.Durable.Test is a thin binding of it.
//
// It may import runtime/durable, runtime/db, runtime/task and the standard
// library; never a Sky value (stdlib/durable binds it to Sky).
package durabletest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// Epoch is the virtual clock's reading when a Harness starts.
var Epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// maxPolls bounds one Drain: a workflow that keeps making work due (a loop
// of zero-length sleeps) is an error, not a hang.
const maxPolls = 10000

// Harness is one fresh database, a virtual clock and the worker on it. Its
// methods are for one goroutine at a time.
type Harness struct {
	d     *db.DB
	close func() error
	defs  []durable.Workflow

	mu  sync.Mutex
	now time.Time

	e       *durable.Engine
	workers int
	// onBoundary observes (and may crash at) the journal boundaries of the
	// Harness's engines; crashed names the run whose worker it stopped ("":
	// none).
	onBoundary func(durable.Point) error
	crashed    string
}

// Opener gives a Harness its database: an empty one (no table at all),
// and the function that closes and removes it.
type Opener func(ctx context.Context) (d *db.DB, close func() error, err error)

// SQLite is the default Opener: a fresh SQLite file in a temporary
// directory, removed on close.
func SQLite(ctx context.Context) (*db.DB, func() error, error) {
	return openSQLiteCopy(ctx, nil)
}

// openSQLiteCopy opens a fresh SQLite file in a temporary directory holding
// a copy of template (nil: empty), removed on close.
func openSQLiteCopy(ctx context.Context, template []byte) (*db.DB, func() error, error) {
	dir, err := os.MkdirTemp("", "sky-durabletest-*")
	if err != nil {
		return nil, nil, task.Errorf(task.Io, "durabletest: cannot make a temporary directory: %w", err)
	}
	file := filepath.Join(dir, "test.db")
	if template != nil {
		if err := os.WriteFile(file, template, 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, nil, task.Errorf(task.Io, "durabletest: cannot copy the template database: %w", err)
		}
	}
	d, err := db.Open(ctx, "sqlite", file)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return d, func() error {
		err := d.Close()
		os.RemoveAll(dir)
		return err
	}, nil
}

// SQLiteCopies is an Opener like SQLite whose databases are copies of one
// file that already has the durable tables (made on the first open), so a
// fresh Harness costs a file copy instead of the migrations: what
// CrashEverywhere, which makes one per crash point, uses.
func SQLiteCopies() Opener {
	var template []byte
	return func(ctx context.Context) (*db.DB, func() error, error) {
		if template == nil {
			t, err := sqliteTemplate(ctx)
			if err != nil {
				return nil, nil, fmt.Errorf("durabletest: cannot make the template database: %w", err)
			}
			template = t
		}
		return openSQLiteCopy(ctx, template)
	}
}

// sqliteTemplate is the content of a SQLite file with the durable tables.
func sqliteTemplate(ctx context.Context) ([]byte, error) {
	dir, err := os.MkdirTemp("", "sky-durabletest-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "template.db")
	d, err := db.Open(ctx, "sqlite", file)
	if err != nil {
		return nil, err
	}
	if err := durable.New(d, durable.Options{}).Setup(ctx); err != nil {
		d.Close()
		return nil, err
	}
	// Closing the last connection checkpoints the WAL into the file.
	if err := d.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(file)
}

// New makes a Harness whose worker polls defs: a fresh SQLite database in a
// temporary directory (removed by Close) with the durable tables, and a
// virtual clock at Epoch.
func New(ctx context.Context, defs []durable.Workflow) (*Harness, error) {
	return NewWith(ctx, SQLite, defs)
}

// NewWith is New on the database open gives (PostgreSQL, say).
func NewWith(ctx context.Context, open Opener, defs []durable.Workflow) (*Harness, error) {
	d, closeDB, err := open(ctx)
	if err != nil {
		return nil, err
	}
	h := &Harness{d: d, close: closeDB, defs: defs, now: Epoch}
	h.e = h.newWorker()
	if err := h.e.Setup(ctx); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// Close closes the database and removes it.
func (h *Harness) Close() error { return h.close() }

// newWorker is a fresh engine over the Harness's database: what a restarted
// process has (nothing in memory).
func (h *Harness) newWorker() *durable.Engine {
	h.workers++
	// The default lease never runs out on the virtual clock, which stands
	// still during a poll; a crashed worker's run is released instead
	// (Drain). No heartbeat: nothing needs renewing.
	return durable.New(h.d, durable.Options{
		Clock:      h.Now,
		Heartbeat:  -1,
		WorkerID:   fmt.Sprintf("durabletest-%d", h.workers),
		Rand:       rand.New(rand.NewPCG(1, uint64(h.workers))),
		OnBoundary: h.boundary,
	})
}

func (h *Harness) boundary(p durable.Point) error {
	if h.onBoundary == nil {
		return nil
	}
	err := h.onBoundary(p)
	if err != nil {
		h.crashed = p.RunID
	}
	return err
}

// DB is the Harness's database: the one workflows see as their Ctx's.
func (h *Harness) DB() *db.DB { return h.d }

// Engine is the current worker (a fresh one after each injected crash).
func (h *Harness) Engine() *durable.Engine { return h.e }

// Now reads the virtual clock.
func (h *Harness) Now() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

func (h *Harness) setNow(t time.Time) {
	h.mu.Lock()
	h.now = t
	h.mu.Unlock()
}

// Start starts a run of w with an input in JSON.
func (h *Harness) Start(ctx context.Context, w durable.Workflow, runID, input string) error {
	return h.e.StartJSON(ctx, w, runID, input)
}

// StartWith starts a run with options (priority, deadline): the deadline
// counts on the virtual clock.
func (h *Harness) StartWith(ctx context.Context, opts durable.StartOptions, w durable.Workflow, runID, input string) error {
	return h.e.StartJSONWith(ctx, opts, w, runID, input)
}

// Schedule declares a schedule on the virtual clock: Advance stops at each
// of its ticks, so each tick it passes starts its run once.
func (h *Harness) Schedule(ctx context.Context, w durable.Workflow, id, expr, input string, opts durable.ScheduleOptions) error {
	return h.e.ScheduleJSON(ctx, w, id, expr, input, opts)
}

// Signal stores signal name with a JSON payload for run runID. Like
// Engine.Signal it does not advance the run: Drain or Advance does.
func (h *Harness) Signal(ctx context.Context, runID, name, payload string) error {
	return h.e.Signal(ctx, runID, name, payload)
}

// Drain polls until no run is due. A worker stopped by an injected crash is
// replaced by a fresh one, and the crashed run is released (as `sky durable
// release` does for a worker known dead: due at once, the attempt counted),
// so the fresh worker resumes it at once without the virtual clock moving:
// a crash changes nothing the script observes. The lost claim gives back
// the rate-limit token it took, or the resumed run would wait for the next
// token, which only a clock move brings.
func (h *Harness) Drain(ctx context.Context) error {
	for i := 0; i < maxPolls; i++ {
		rates, err := h.saveRates(ctx)
		if err != nil {
			return err
		}
		worked, err := h.e.Poll(ctx, h.defs)
		if err != nil {
			return err
		}
		if run := h.crashed; run != "" {
			h.crashed = ""
			h.e = h.newWorker()
			if err := h.release(ctx, run, rates); err != nil {
				return err
			}
			continue
		}
		if !worked {
			return nil
		}
	}
	return task.Errorf(task.Unexpected, "durabletest: runs were still due after %d polls; hint: a workflow keeps making itself due (a loop of zero-length sleeps?)", maxPolls)
}

// saveRates reads, before a poll that may crash, the rate-limit state of
// the Harness's rate-limited workflows (none when no crash is armed).
func (h *Harness) saveRates(ctx context.Context) (durable.RateSnapshot, error) {
	if h.onBoundary == nil {
		return durable.RateSnapshot{}, nil
	}
	var rated []string
	for _, w := range h.defs {
		if w.Limits != nil && w.Limits.RatePerSecond > 0 && !slices.Contains(rated, w.Name) {
			rated = append(rated, w.Name)
		}
	}
	if len(rated) == 0 {
		return durable.RateSnapshot{}, nil
	}
	return h.e.SaveRates(ctx, rated)
}

// release frees run after its worker's injected crash, unless the crash
// came after the run's last commit (it is done, or failed, already), and
// puts its workflow's rate limit back as it was before the poll (rates).
//
// In production a crashed claim keeps its token, and the run resumes when
// its lease ends or an operator releases it, by which time the next token
// has usually come. The Harness instead resumes it at once on a clock that
// stands still, so it makes the crash take no time at all: the claim the
// crash lost costs no token either (a poll claims one run, so rates is
// the state just before it). Moving the clock to the next token instead
// would shift every absolute time the resumed run sees (Durable.now, a
// run's deadline, a schedule tick) and report a correct workflow.
func (h *Harness) release(ctx context.Context, run string, rates durable.RateSnapshot) error {
	r, err := h.e.ReadRun(ctx, run)
	if err != nil || r.Status != durable.StatusRunning {
		return err
	}
	if err := h.e.RestoreRate(ctx, rates, r.Workflow); err != nil {
		return fmt.Errorf("durabletest: cannot give back the rate-limit token of run %q after the injected crash: %w", run, err)
	}
	if err := h.e.Release(ctx, run); err != nil {
		return fmt.Errorf("durabletest: cannot release run %q after the injected crash: %w", run, err)
	}
	return nil
}

// Advance moves the virtual clock forward by d, stopping at each wake time,
// schedule tick and run deadline on the way to run what is due then (a
// timer set while advancing fires in the same call if it falls within d),
// and drains at the end.
func (h *Harness) Advance(ctx context.Context, d time.Duration) error {
	if d < 0 {
		return task.Errorf(task.InvalidInput, "durabletest: cannot move the clock back (by %s)", d)
	}
	target := h.Now().Add(d)
	for {
		if err := h.Drain(ctx); err != nil {
			return err
		}
		next, ok, err := h.nextWake(ctx, target)
		if err != nil {
			return err
		}
		if !ok {
			h.moveTo(target)
			return h.Drain(ctx)
		}
		h.moveTo(next)
	}
}

// moveTo sets the virtual clock to t with a fresh worker, whose deadline
// sweep and schedule check (each at most once a second of its clock) are
// due at once, so a deadline or tick fires at its own time.
func (h *Harness) moveTo(t time.Time) {
	h.setNow(t)
	h.e = h.newWorker()
}

// nextWake is the earliest time after now and at or before target when
// something becomes due: the wake time of a run waiting on a timer or in
// backoff, a run's deadline, a schedule's next tick, a rate limit's next
// claim.
func (h *Harness) nextWake(ctx context.Context, target time.Time) (time.Time, bool, error) {
	var next time.Time
	now := h.Now()
	consider := func(w time.Time) {
		if w.IsZero() || !w.After(now) || w.After(target) {
			return
		}
		if next.IsZero() || w.Before(next) {
			next = w
		}
	}
	for _, st := range []durable.Status{durable.StatusWaiting, durable.StatusFailed} {
		runs, err := h.e.ListRuns(ctx, durable.ListFilter{Status: st, Limit: math.MaxInt32})
		if err != nil {
			return time.Time{}, false, err
		}
		for _, r := range runs {
			consider(r.WakeAt)
			consider(r.Deadline)
		}
	}
	schedules, err := h.e.Schedules(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	for _, s := range schedules {
		consider(s.NextAt)
	}
	names := make([]string, len(h.defs))
	for i, w := range h.defs {
		names[i] = w.Name
	}
	claims, err := h.e.NextRateClaims(ctx, names)
	if err != nil {
		return time.Time{}, false, err
	}
	for _, t := range claims {
		consider(t)
	}
	return next, !next.IsZero(), nil
}

// Describe reads a run and its journal.
func (h *Harness) Describe(ctx context.Context, runID string) (durable.Run, []durable.JournalEntry, error) {
	return h.e.Describe(ctx, runID)
}

// StepIDs lists a journal's step ids in order.
func StepIDs(j []durable.JournalEntry) []string {
	ids := make([]string, len(j))
	for i, e := range j {
		ids[i] = e.StepID
	}
	return ids
}
