package durable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/keyring"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Encryption at rest (Options.Keys) happens here, at the one seam between
// the engine and its store: sealingStore seals every payload on its way to
// the store and opens it on its way back, so both stores see only sealed
// text and stay unaware of keys. The place a value is sealed for (its
// associated data) is its run id and its entry (see the place* functions),
// within the engine's namespace (keyring.Ring.Scoped with its id prefix).
// Plain values stored before a keyring was set still read (Open passes
// them through); `sky durable rekey` (Engine.Rekey) seals them.
//
// What is not sealed: run ids, workflow, step, signal and event names,
// errors (last_error, which a step's error message may carry), history and
// model snapshots (SaveSnapshot).

// The entries of a run a value may be sealed for.
const (
	placeInput  = "input"
	placeOutput = "output"
)

// placeStep is the place of the journal entry of step id.
func placeStep(id string) string { return "step:" + id }

// placeSignal is the place of the payload of signal name.
func placeSignal(name string) string { return "signal:" + name }

// placeEvent is the place of the value of event key.
func placeEvent(key string) string { return "event:" + key }

// scheduleOwner is the owner a schedule's input is sealed for: the runs its
// ticks start (store.RunIDOf) copy that input in SQL, so a run input that
// does not open for its run opens for its schedule's.
func scheduleOwner(id string) string { return "schedule\x00" + id }

// ErrUnreadable is wrapped by the error of an operation that needs a
// payload this engine cannot decrypt: its key is not in Options.Keys, or
// the value was altered or moved. Nothing is changed by it; a run that
// meets it stays failed and is retried, never made dead by it (see
// keyFailure).
var ErrUnreadable = errors.New("durable: a payload does not decrypt")

// unreadable is the error for the value at (runID, what) that did not open.
func unreadable(runID, what string, err error) error {
	return wrapping(task.Errorf(task.Unavailable, "durable run %q: its %s cannot be read: %v", runID, what, err), ErrUnreadable)
}

// sealingStore is a store.Store that seals payloads with ring.
type sealingStore struct {
	store.Store
	ring *keyring.Ring
}

// openRun opens r's input and output; a value that does not open is left
// sealed (readers show keyring.Describe) and reported.
func (s *sealingStore) openRun(r *store.Run) error {
	var first error
	in, err := s.openInput(r.ID, r.Input)
	if err == nil {
		r.Input = in
	} else {
		first = unreadable(r.ID, "input", err)
	}
	if r.Output != "" {
		out, err := s.ring.Open(r.ID, placeOutput, r.Output)
		if err == nil {
			r.Output = out
		} else if first == nil {
			first = unreadable(r.ID, "output", err)
		}
	}
	return first
}

// openInput opens a run's input: sealed for the run, or for the schedule
// whose tick started it.
func (s *sealingStore) openInput(runID, text string) (string, error) {
	plain, err := s.ring.Open(runID, placeInput, text)
	if err == nil {
		return plain, nil
	}
	if i := strings.LastIndexByte(runID, '@'); i > 0 {
		if p, err2 := s.ring.Open(scheduleOwner(runID[:i]), placeInput, text); err2 == nil {
			return p, nil
		}
	}
	return "", err
}

// openJournal opens each entry of runID's journal in place; an entry that
// does not open is left sealed and the first such is reported.
func (s *sealingStore) openJournal(runID string, j []store.JournalEntry) error {
	var first error
	for i := range j {
		plain, err := s.ring.Open(runID, placeStep(j[i].StepID), j[i].Result)
		if err != nil {
			if first == nil {
				first = unreadable(runID, fmt.Sprintf("journal entry %q", j[i].StepID), err)
			}
			continue
		}
		j[i].Result = plain
	}
	return first
}

// stillSealed is the error for the value at (runID, place) that a read
// left sealed (it did not open), nil for a value the read opened.
func (s *sealingStore) stillSealed(runID, place, text string) error {
	if _, sealed := keyring.KeyOf(text); !sealed {
		return nil
	}
	_, err := s.ring.Open(runID, place, text)
	return unreadable(runID, place, err)
}

// openClaim opens a claimed run's input for its body (advance opens its
// journal with openJournal, however it was read).
func (s *sealingStore) openClaim(c *store.Claimed) error {
	in, err := s.openInput(c.ID, c.Input)
	if err != nil {
		return unreadable(c.ID, "input", err)
	}
	c.Input = in
	return s.openJournal(c.ID, c.Journal)
}

func (s *sealingStore) sealEntry(runID string, e *store.JournalEntry) *store.JournalEntry {
	if e == nil {
		return nil
	}
	sealed := *e
	sealed.Result = s.ring.Seal(runID, placeStep(e.StepID), e.Result)
	return &sealed
}

func (s *sealingStore) InsertRun(ctx context.Context, r store.NewRun, now time.Time) (bool, string, error) {
	r.Input = s.ring.Seal(r.ID, placeInput, r.Input)
	return s.Store.InsertRun(ctx, r, now)
}

// InsertClaimedRun seals the input as InsertRun; the run it returns
// carries it sealed, as a claim's does, for advance's openClaim.
func (s *sealingStore) InsertClaimedRun(ctx context.Context, r store.NewRun, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, string, error) {
	r.Input = s.ring.Seal(r.ID, placeInput, r.Input)
	return s.Store.InsertClaimedRun(ctx, r, now, lease, token, worker)
}

// LoadJournal opens what it can; an entry left sealed is for a reader to
// show (a worker checks with openJournal).
func (s *sealingStore) LoadJournal(ctx context.Context, runID string) ([]store.JournalEntry, error) {
	j, err := s.Store.LoadJournal(ctx, runID)
	if err == nil {
		_ = s.openJournal(runID, j)
	}
	return j, err
}

func (s *sealingStore) AppendEntry(ctx context.Context, q *db.DB, f store.Fence, e store.JournalEntry, now time.Time) error {
	return s.Store.AppendEntry(ctx, q, f, *s.sealEntry(f.RunID, &e), now)
}

func (s *sealingStore) ConsumeSignal(ctx context.Context, f store.Fence, name string, e store.JournalEntry, accept func(payload, traceContext string) (string, error), now time.Time) (bool, error) {
	return s.Store.ConsumeSignal(ctx, f, name, e, func(payload, traceContext string) (string, error) {
		plain, err := s.ring.Open(f.RunID, placeSignal(name), payload)
		if err != nil {
			return "", unreadable(f.RunID, fmt.Sprintf("signal %q", name), err)
		}
		journal, err := accept(plain, traceContext)
		if err != nil {
			return "", err
		}
		return s.ring.Seal(f.RunID, placeStep(e.StepID), journal), nil
	}, now)
}

func (s *sealingStore) Complete(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time) error {
	return s.Store.Complete(ctx, f, s.sealEntry(f.RunID, last), s.ring.Seal(f.RunID, placeOutput, output), now)
}

func (s *sealingStore) CompleteAndClaim(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time, next store.NextClaim) (store.Claimed, bool, error, error) {
	return s.Store.CompleteAndClaim(ctx, f, s.sealEntry(f.RunID, last), s.ring.Seal(f.RunID, placeOutput, output), now, next)
}

func (s *sealingStore) PutSignal(ctx context.Context, runID, name, payload, traceContext string, now time.Time) (bool, error) {
	return s.Store.PutSignal(ctx, runID, name, s.ring.Seal(runID, placeSignal(name), payload), traceContext, now)
}

func (s *sealingStore) ReplaceSignal(ctx context.Context, runID, name, payload string, now time.Time) (bool, error) {
	return s.Store.ReplaceSignal(ctx, runID, name, s.ring.Seal(runID, placeSignal(name), payload), now)
}

// ListSignals opens what it can; a payload left sealed is for a reader to
// show.
func (s *sealingStore) ListSignals(ctx context.Context, runID string) ([]store.SignalInfo, error) {
	sigs, err := s.Store.ListSignals(ctx, runID)
	for i := range sigs {
		if plain, err := s.ring.Open(runID, placeSignal(sigs[i].Name), sigs[i].Payload); err == nil {
			sigs[i].Payload = plain
		}
	}
	return sigs, err
}

// ReadRun opens what it can (see openRun).
func (s *sealingStore) ReadRun(ctx context.Context, runID string) (store.Run, error) {
	r, err := s.Store.ReadRun(ctx, runID)
	if err == nil {
		_ = s.openRun(&r)
	}
	return r, err
}

// ListRuns opens what it can (see openRun).
func (s *sealingStore) ListRuns(ctx context.Context, f store.ListFilter) ([]store.Run, error) {
	runs, err := s.Store.ListRuns(ctx, f)
	for i := range runs {
		_ = s.openRun(&runs[i])
	}
	return runs, err
}

func (s *sealingStore) InsertChildren(ctx context.Context, q *db.DB, parentID, group, workflow string, version int, children []store.NewChild, now time.Time) (int64, error) {
	sealed := make([]store.NewChild, len(children))
	for i, c := range children {
		c.Input = s.ring.Seal(c.ID, placeInput, c.Input)
		sealed[i] = c
	}
	return s.Store.InsertChildren(ctx, q, parentID, group, workflow, version, sealed, now)
}

// ReadChildren opens the children's outputs; one that does not open is an
// ErrUnreadable error (a parent body needs it).
func (s *sealingStore) ReadChildren(ctx context.Context, ids []string) ([]store.ChildState, error) {
	states, err := s.Store.ReadChildren(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range states {
		if states[i].Output == "" {
			continue
		}
		out, err := s.ring.Open(states[i].ID, placeOutput, states[i].Output)
		if err != nil {
			return nil, unreadable(states[i].ID, "output", err)
		}
		states[i].Output = out
	}
	return states, nil
}

func (s *sealingStore) PutEvent(ctx context.Context, q *db.DB, runID, key, value string, now time.Time) error {
	return s.Store.PutEvent(ctx, q, runID, key, s.ring.Seal(runID, placeEvent(key), value), now)
}

// GetEvent opens the value; one that does not open is an ErrUnreadable
// error.
func (s *sealingStore) GetEvent(ctx context.Context, runID, key string) (string, bool, error) {
	v, found, err := s.Store.GetEvent(ctx, runID, key)
	if err != nil || !found {
		return v, found, err
	}
	plain, err := s.ring.Open(runID, placeEvent(key), v)
	if err != nil {
		return "", false, unreadable(runID, fmt.Sprintf("event %q", key), err)
	}
	return plain, true, nil
}

func (s *sealingStore) ForkRun(ctx context.Context, f store.Fork, now time.Time) (string, error) {
	f.Set = s.sealEntry(f.NewID, f.Set)
	return s.Store.ForkRun(ctx, f, now)
}

func (s *sealingStore) PutSchedule(ctx context.Context, sc store.Schedule, now time.Time, next func(time.Time) time.Time) (store.Schedule, error) {
	plain := sc.Input
	sc.Input = s.ring.Seal(scheduleOwner(sc.ID), placeInput, sc.Input)
	out, err := s.Store.PutSchedule(ctx, sc, now, next)
	out.Input = plain
	return out, err
}

// ListSchedules opens what it can; an input left sealed is for a reader to
// show.
func (s *sealingStore) ListSchedules(ctx context.Context) ([]store.Schedule, error) {
	list, err := s.Store.ListSchedules(ctx)
	for i := range list {
		if plain, err := s.ring.Open(scheduleOwner(list[i].ID), placeInput, list[i].Input); err == nil {
			list[i].Input = plain
		}
	}
	return list, err
}
