package durable

import (
	"context"
	"errors"
	"fmt"

	"skydurable/runtime/durable/keyring"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// DefaultRekeyBatch is how many runs one batch of Rekey reads and rewrites.
const DefaultRekeyBatch = 100

// RekeyOptions tune Rekey.
type RekeyOptions struct {
	// BatchSize is how many runs a batch covers (default
	// DefaultRekeyBatch); each batch is one read and one short transaction.
	BatchSize int
	// After resumes after this run id (Progress.Last of an interrupted
	// Rekey); "" starts at the first run.
	After string
	// DryRun counts what would be resealed and writes nothing.
	DryRun bool
	// OnBatch, when set, is called after each batch with the totals so far.
	OnBatch func(RekeyProgress)
}

// RekeyProgress counts Rekey's work.
type RekeyProgress struct {
	// Runs and Values are the runs and payloads read; Resealed the
	// payloads sealed again with the first key (or that would be, on a dry
	// run); Unreadable those this keyring cannot open (left as they are).
	Runs, Values, Resealed, Unreadable int64
	// Last is the last run id done: Rekey resumes after it (After).
	Last string
	// FirstUnreadable says why the first unreadable payload did not open.
	FirstUnreadable string
}

// Rekey seals every stored payload with the first key of Options.Keys:
// plain ones (stored before encryption was on), ones sealed with an older
// key, and fork copies still sealed for the run they were copied from. It
// goes through the runs in id order, BatchSize at a time, then the
// schedules. It is idempotent (a payload already sealed with the first key
// for its place is left alone) and resumable (After); a payload written
// while it runs is never overwritten (each write is guarded by the text it
// replaces). Payloads the keyring cannot open are counted and left. Signals
// sent to run ids no run has are not covered (they expire:
// Options.OrphanSignalTTL).
func (e *Engine) Rekey(ctx context.Context, opts RekeyOptions) (RekeyProgress, error) {
	var p RekeyProgress
	if e.optsErr != nil {
		return p, e.optsErr
	}
	if e.sealed.ring == nil {
		return p, task.Errorf(task.InvalidInput, "durable: rekey needs a keyring; hint: set SKY_DURABLE_KEYS=NEW:BASE64,OLD:BASE64 (the first key seals)")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultRekeyBatch
	}
	p.Last = opts.After
	for {
		ids, err := e.store.RunsAfter(ctx, p.Last, opts.BatchSize)
		if err != nil || len(ids) == 0 {
			if err == nil {
				err = e.rekeySchedules(ctx, opts.DryRun, &p)
			}
			return p, err
		}
		if err := e.resealRuns(ctx, ids, opts.DryRun, &p); err != nil {
			return p, err
		}
		p.Runs += int64(len(ids))
		p.Last = ids[len(ids)-1]
		if opts.OnBatch != nil {
			opts.OnBatch(p)
		}
	}
}

// resealRuns seals again, with the first key, every payload of the runs ids
// that is not sealed with it for its own place, counting into p.
func (e *Engine) resealRuns(ctx context.Context, ids []string, dryRun bool, p *RekeyProgress) error {
	payloads, err := e.store.Payloads(ctx, ids)
	if err != nil {
		return err
	}
	forkedFrom := map[string]string{}
	for _, pl := range payloads {
		if pl.Place == store.PlaceInput {
			forkedFrom[pl.RunID] = pl.ForkedFrom
		}
	}
	var swaps []store.Swap
	for _, pl := range payloads {
		p.Values++
		plain, resealed, err := e.reopen(ctx, pl, forkedFrom)
		switch {
		case err != nil:
			p.Unreadable++
			if p.FirstUnreadable == "" {
				p.FirstUnreadable = err.Error()
			}
		case resealed:
			p.Resealed++
			swaps = append(swaps, store.Swap{Payload: pl, New: e.sealed.ring.Seal(pl.RunID, placeOf(pl), plain)})
		}
	}
	if dryRun || len(swaps) == 0 {
		return nil
	}
	_, err = e.store.SwapPayloads(ctx, swaps)
	return err
}

// placeOf is the entry a stored payload is sealed for.
func placeOf(pl store.Payload) string {
	switch pl.Place {
	case store.PlaceOutput:
		return placeOutput
	case store.PlaceJournal:
		return placeStep(pl.Key)
	case store.PlaceSignal:
		return placeSignal(pl.Key)
	case store.PlaceEvent:
		return placeEvent(pl.Key)
	}
	return placeInput
}

// maxForkDepth bounds the walk up a fork's ancestry.
const maxForkDepth = 16

// reopen opens pl and says whether it needs sealing again: it is plain,
// sealed with another key than the first, or sealed for another place (a
// scheduled run's input, sealed for its schedule; a fork's copy, sealed for
// the run it was copied from, or that run's origin).
func (e *Engine) reopen(ctx context.Context, pl store.Payload, forkedFrom map[string]string) (plain string, reseal bool, err error) {
	ring := e.sealed.ring
	id, sealed := keyring.KeyOf(pl.Text)
	if !sealed {
		return pl.Text, true, nil
	}
	place := placeOf(pl)
	plain, err = ring.Open(pl.RunID, place, pl.Text)
	if err == nil {
		return plain, id != ring.Primary(), nil
	}
	if !errors.Is(err, keyring.ErrNotOpened) {
		return "", false, err
	}
	if pl.Place == store.PlaceInput {
		if p, err2 := e.sealed.openInput(pl.RunID, pl.Text); err2 == nil {
			return p, true, nil
		}
	}
	owner := forkedFrom[pl.RunID]
	for depth := 0; depth < maxForkDepth && owner != ""; depth++ {
		if p, err2 := ring.Open(owner, place, pl.Text); err2 == nil {
			return p, true, nil
		}
		next, known := forkedFrom[owner]
		if !known {
			r, err2 := e.sealed.Store.ReadRun(ctx, owner)
			if err2 != nil {
				break
			}
			next = r.ForkedFrom
			forkedFrom[owner] = next
		}
		owner = next
	}
	return "", false, err
}

// rekeySchedules seals the schedules' inputs again, as resealRuns.
func (e *Engine) rekeySchedules(ctx context.Context, dryRun bool, p *RekeyProgress) error {
	list, err := e.sealed.Store.ListSchedules(ctx)
	if err != nil {
		return err
	}
	ring := e.sealed.ring
	var swaps []store.Swap
	for _, s := range list {
		p.Values++
		owner := scheduleOwner(s.ID)
		plain, err := ring.Open(owner, placeInput, s.Input)
		if err != nil {
			p.Unreadable++
			if p.FirstUnreadable == "" {
				p.FirstUnreadable = fmt.Sprintf("schedule %q: %v", s.ID, err)
			}
			continue
		}
		if id, sealed := keyring.KeyOf(s.Input); sealed && id == ring.Primary() {
			continue
		}
		p.Resealed++
		swaps = append(swaps, store.Swap{Payload: store.Payload{Place: store.PlaceSchedule, RunID: s.ID, Text: s.Input}, New: ring.Seal(owner, placeInput, plain)})
	}
	if dryRun || len(swaps) == 0 {
		return nil
	}
	_, err = e.store.SwapPayloads(ctx, swaps)
	return err
}

// resealFork seals a fresh fork's copied payloads (and its copied
// children's) for their new places, so its worker can open them: ForkRun
// copies them byte for byte, sealed for the runs they came from. A worker
// that claims the fork before this finishes meets an unreadable payload
// and retries it after backoff (keyFailure); `sky durable rekey` does the
// same work should this not finish.
func (e *Engine) resealFork(ctx context.Context, newID string) error {
	if e.sealed.ring == nil {
		return nil
	}
	ids := []string{newID}
	children, err := e.store.ListRuns(ctx, store.ListFilter{Parent: newID, Limit: maxForkChildren})
	if err != nil {
		return err
	}
	for _, c := range children {
		ids = append(ids, c.ID)
	}
	var p RekeyProgress
	return e.resealRuns(ctx, ids, false, &p)
}

// maxForkChildren bounds the copied children resealFork covers; rekey
// covers any beyond.
const maxForkChildren = 10000
