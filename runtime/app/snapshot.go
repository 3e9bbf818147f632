package app

import (
	"context"
	"fmt"

	"skydurable/runtime/task"
)

// restore replaces the init model by the stored snapshot, when there is one
// that decodes. An undecodable snapshot is reported and disables saving, so
// the fresh model never overwrites it.
func (l *loop) restore(ctx context.Context) error {
	s := l.p.Snapshots
	if s == nil {
		return nil
	}
	seq, data, found, err := s.Load(ctx)
	if err != nil {
		e := task.As(err)
		return &task.Error{Kind: e.Kind, Message: fmt.Sprintf("App.withDurable: cannot read the snapshot %q: %s", s.ID, e.Message), Cause: err}
	}
	l.saving = true
	if !found {
		return nil
	}
	m, err := s.Decode(data)
	if err != nil {
		l.saving = false
		fmt.Fprintf(l.o.Stderr,
			"App.withDurable: the snapshot %q (sequence %d) does not decode with the model codec: %v\n"+
				"  starting from init instead; the stored snapshot is kept and will not be overwritten by this run.\n"+
				"  hint: fix the codec (or migrate the data), or use App.withDurableId with a new id.\n",
			s.ID, seq, err)
		return nil
	}
	l.model, l.seq, l.lastSaved = m, seq, data
	return nil
}

// save writes the model after an update when it changed. A failure is
// reported and retried after the next update (with a higher sequence).
func (l *loop) save() {
	s := l.p.Snapshots
	if s == nil || !l.saving {
		return
	}
	data, err := s.Encode(l.model)
	if err != nil {
		fmt.Fprintf(l.o.Stderr, "App.withDurable: the model does not encode, snapshot %q not saved: %v\n", s.ID, err)
		return
	}
	if data == l.lastSaved {
		return
	}
	l.seq++
	wrote, err := s.Save(l.taskCtx, l.seq, data)
	if err != nil {
		fmt.Fprintf(l.o.Stderr, "App.withDurable: cannot save the snapshot %q (sequence %d): %v\n", s.ID, l.seq, err)
		return
	}
	if !wrote && !l.warnedOld {
		l.warnedOld = true
		fmt.Fprintf(l.o.Stderr, "App.withDurable: the snapshot %q holds a newer sequence than %d (another process with the same id?); this run's snapshots are not written\n", s.ID, l.seq)
	}
	l.lastSaved = data
}
