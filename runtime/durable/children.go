package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Composing workflows: a run starts child runs of any workflow and waits for
// their outputs (Sky's Durable.startChild, awaitChild and all). A child is an
// ordinary run, claimed by any worker that has its workflow, with the id
// ChildID(parent, key) and parent_id recorded. Its start is a journalled step
// of the parent whose transaction also inserts the child, so a replay (or a
// parent killed and resumed) never starts it twice. Waiting suspends the
// parent; the child's finishing transaction makes it due (the trigger of
// store migration 0005), so nothing polls the child.

// ChildID is the id of the child that run parentID started under key.
func ChildID(parentID, key string) string { return parentID + "/" + key }

// Child is one child of All: its key and its input.
type Child[I any] struct {
	Key   string
	Input I
}

// StartChild starts a child run of def with id ChildID(c.RunID(), key)
// (Sky's Durable.startChild). It is the journalled step "child:<key>": the
// child's insert commits with the journal row. A run with that id already
// there is kept when it is of def's workflow and a child of this run;
// otherwise StartChild fails with a Conflict naming it.
func StartChild[I, O any](c *Ctx, def Def[I, O], key string, input I) task.Task[struct{}] {
	return task.Map(startChildren(c, def, "child:"+key, "", []Child[I]{{Key: key, Input: input}}, func(int64) {}), func(int64) struct{} { return struct{}{} })
}

// AwaitChild waits for the child started under key and yields its output
// (Sky's Durable.awaitChild). While the child is unfinished the parent
// suspends; the child's completion makes it due at once. A dead or
// cancelled child fails the parent's attempt with an error naming the child
// and its last error (retry the child, then the parent). The output is
// journalled as step "await:<key>".
func AwaitChild[I, O any](c *Ctx, def Def[I, O], key string) task.Task[O] {
	return task.From(func(ctx context.Context) (O, error) {
		var zero O
		if err := checkKeys(c, "Durable.awaitChild", []string{key}); err != nil {
			return zero, err
		}
		id := "await:" + key
		prev, err := c.enter(ctx, id, KindStep)
		if err != nil {
			return zero, err
		}
		if prev != nil {
			return replay(c, def.out, *prev)
		}
		defer c.finish()
		childID := ChildID(c.RunID(), key)
		states, err := c.e.store.ReadChildren(ctx, []string{childID})
		if err != nil {
			return zero, err
		}
		if len(states) == 0 {
			return zero, task.Errorf(task.NotFound,
				"durable run %q: Durable.awaitChild found no child %q (run %q); hint: start it first with Durable.startChild under the same key", c.RunID(), key, childID)
		}
		st := states[0]
		if err := childUsable(c, def.name, st); err != nil {
			return zero, err
		}
		if !st.Finished() {
			return zero, c.awaitChildren(ctx, store.ChildWait{ChildID: childID}, fmt.Sprintf("awaiting child %q", childID))
		}
		out, err := def.out.Decode(st.Output)
		if err != nil {
			return zero, childOutputError(c, st, err)
		}
		return out, c.deferEntry(c.entry(id, KindStep, st.Output))
	})
}

// All starts one child of def per element of children, in one statement
// whatever their number, and yields their outputs in the same order once
// every one is done (Sky's Durable.all). Its steps are "all:<first key>"
// (the start) and "all-done:<first key>" (the outputs, as one JSON array).
// The parent sleeps meanwhile: the last child to finish, or the first to
// end dead or cancelled, makes it due. A dead or cancelled child fails the
// parent's attempt as in AwaitChild. An empty list yields an empty list
// and journals nothing.
func All[I, O any](c *Ctx, def Def[I, O], children []Child[I]) task.Task[[]O] {
	if len(children) == 0 {
		return task.Succeed([]O{})
	}
	group := children[0].Key
	// started is set when this attempt inserted every child just now: they
	// are all unfinished, so the wait need not read them first.
	started := false
	start := startChildren(c, def, "all:"+group, group, children, func(inserted int64) { started = inserted == int64(len(children)) })
	return task.AndThen(start, func(int64) task.Task[[]O] {
		return awaitGroup(c, def, group, children, started)
	})
}

// startChildren journals step id, inserting the children in its transaction;
// fresh is told how many it inserted when the step was not replayed.
func startChildren[I, O any](c *Ctx, def Def[I, O], id, group string, children []Child[I], fresh func(inserted int64)) task.Task[int64] {
	return task.From(func(ctx context.Context) (int64, error) {
		keys := make([]string, len(children))
		for i, ch := range children {
			keys[i] = ch.Key
		}
		fn := "Durable.startChild"
		if group != "" {
			fn = "Durable.all"
		}
		if err := checkKeys(c, fn, keys); err != nil {
			return 0, err
		}
		return task.Run(ctx, Transaction(c, codec.Int, id, func(ctx context.Context, tx *db.DB) (int64, error) {
			news := make([]store.NewChild, len(children))
			for i, ch := range children {
				childID := ChildID(c.RunID(), ch.Key)
				js, err := def.in.Encode(ch.Input)
				if err != nil {
					return 0, task.Errorf(task.InvalidInput, "durable run %q: the input of child %q (workflow %q) does not encode: %s", c.RunID(), childID, def.name, errText(err))
				}
				if err := c.checkPayload(func() string { return fmt.Sprintf("the input of child %q", childID) }, js); err != nil {
					return 0, err
				}
				key, err := runOptions{limits: def.limits}.limitKey(def.name, childID, js)
				if err != nil {
					return 0, err
				}
				news[i] = store.NewChild{ID: childID, Input: js, LimitKey: key}
			}
			n, err := c.e.store.InsertChildren(ctx, tx, c.RunID(), group, def.name, def.version, news, c.e.now())
			if err != nil {
				return 0, err
			}
			if int(n) < len(news) {
				if err := checkExisting(ctx, c, def.name, group, news); err != nil {
					return 0, err
				}
			}
			c.e.log.Info("durable children started", "run", c.RunID(), "workflow", def.name, "children", len(news), "new", n)
			fresh(n)
			return int64(len(news)), nil
		}))
	})
}

// checkExisting accepts children that were already there only when they are
// this run's children of the same workflow, started by the same call (a key
// of a startChild reused in an all would never wake it); any other is a
// permanent Conflict.
func checkExisting(ctx context.Context, c *Ctx, workflow, group string, news []store.NewChild) error {
	ids := make([]string, len(news))
	for i, n := range news {
		ids[i] = n.ID
	}
	states, err := c.e.store.ReadChildren(ctx, ids)
	if err != nil {
		return err
	}
	for _, st := range states {
		if st.ParentID != c.RunID() || st.Workflow != workflow || st.Group != group {
			// Permanent: the child's id is the parent's id and the key, so
			// every attempt meets the same run.
			return Permanent(task.Errorf(task.Conflict,
				"durable run %q: cannot start child %q of workflow %q: a run with that id already exists (workflow %q, parent %q%s); hint: use another child key",
				c.RunID(), st.ID, workflow, st.Workflow, st.ParentID, startedBy(st.Group)))
		}
	}
	return nil
}

// awaitGroup waits for the children of one All; justStarted says they were
// all inserted by this attempt (so none is finished yet).
func awaitGroup[I, O any](c *Ctx, def Def[I, O], group string, children []Child[I], justStarted bool) task.Task[[]O] {
	return task.From(func(ctx context.Context) ([]O, error) {
		id := "all-done:" + group
		prev, err := c.enter(ctx, id, KindStep)
		if err != nil {
			return nil, err
		}
		if prev != nil {
			outs, err := decodeOutputs(def.out, prev.Result)
			if err != nil {
				return nil, badJournal(c.RunID(), *prev, err)
			}
			return outs, nil
		}
		defer c.finish()
		w := store.ChildWait{Group: group}
		if justStarted {
			return nil, c.awaitChildren(ctx, w, fmt.Sprintf("awaiting the %d children of Durable.all %q", len(children), group))
		}
		ids := make([]string, len(children))
		for i, ch := range children {
			ids[i] = ChildID(c.RunID(), ch.Key)
		}
		states, err := c.e.store.ReadChildren(ctx, ids)
		if err != nil {
			return nil, err
		}
		byID := make(map[string]store.ChildState, len(states))
		for _, st := range states {
			byID[st.ID] = st
		}
		unfinished := 0
		texts := make([]string, len(ids))
		for i, childID := range ids {
			st, ok := byID[childID]
			if !ok {
				return nil, task.Errorf(task.NotFound, "durable run %q: Durable.all found no child %q; hint: was it deleted by hand?", c.RunID(), childID)
			}
			if err := childUsable(c, def.name, st); err != nil {
				return nil, err
			}
			if !st.Finished() {
				unfinished++
			}
			texts[i] = st.Output
		}
		if unfinished > 0 {
			return nil, c.awaitChildren(ctx, w, fmt.Sprintf("awaiting %d of %d children of Durable.all %q", unfinished, len(ids), group))
		}
		outs := make([]O, len(ids))
		for i, t := range texts {
			if outs[i], err = def.out.Decode(t); err != nil {
				return nil, childOutputError(c, byID[ids[i]], err)
			}
		}
		js := "[" + strings.Join(texts, ",") + "]"
		if err := c.checkPayload(func() string { return fmt.Sprintf("the outputs of Durable.all %q", group) }, js); err != nil {
			return nil, err
		}
		return outs, c.deferEntry(c.entry(id, KindStep, js))
	})
}

// decodeOutputs reads a journalled JSON array of outputs.
func decodeOutputs[O any](cd codec.Codec[O], js string) ([]O, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(js), &raws); err != nil {
		return nil, err
	}
	outs := make([]O, len(raws))
	for i, r := range raws {
		var err error
		if outs[i], err = cd.Decode(string(r)); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// childUsable fails for a child of another workflow, or one that ended
// dead, cancelled or timed out (it will never yield an output by itself).
func childUsable(c *Ctx, workflow string, st store.ChildState) error {
	if st.Workflow != workflow {
		return task.Errorf(task.Conflict, "durable run %q: child %q is a run of workflow %q, not %q; hint: await it with the WorkflowDef it was started with",
			c.RunID(), st.ID, st.Workflow, workflow)
	}
	switch st.Status {
	case StatusDead:
		return task.Errorf(task.Unavailable, "durable run %q: child %q (workflow %q) is dead: %s; hint: fix the cause and `sky durable retry %s`, then retry this run",
			c.RunID(), st.ID, st.Workflow, st.LastError, st.ID)
	case StatusCancelled, StatusTimedOut:
		last := st.LastError
		if last == "" {
			last = "no error recorded"
		}
		return task.Errorf(task.Unavailable, "durable run %q: child %q (workflow %q) was %s (last error: %s); hint: a %s child never finishes; start another under a new key",
			c.RunID(), st.ID, st.Workflow, endedAs(st.Status), last, st.Status)
	}
	return nil
}

// endedAs words a status a run was ended in by someone else.
func endedAs(s Status) string {
	if s == StatusTimedOut {
		return "timed out at its deadline"
	}
	return string(s)
}

// startedBy says which call started a child of group.
func startedBy(group string) string {
	if group == "" {
		return ", started by Durable.startChild"
	}
	return fmt.Sprintf(", started by Durable.all %q", group)
}

func childOutputError(c *Ctx, st store.ChildState, err error) error {
	return task.Errorf(task.Decode, "durable run %q: the output %s of child %q does not decode: %s; hint: its workflow's output codec changed since it finished",
		c.RunID(), codec.Preview(st.Output), st.ID, errText(err))
}

// checkKeys refuses empty, control-character or repeated child keys.
func checkKeys(c *Ctx, fn string, keys []string) error {
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if k == "" {
			return task.Errorf(task.InvalidInput, "durable run %q: %s with an empty child key; hint: use a key that names the child, e.g. \"shipment-berlin\"", c.RunID(), fn)
		}
		if err := checkName("the child key", k, func() string { return fmt.Sprintf(" of %s in run %q", fn, c.RunID()) }, "use printable text that names the child"); err != nil {
			return err
		}
		if seen[k] {
			return task.Errorf(task.InvalidInput, "durable run %q: %s: the child key %q is given twice; hint: every child of a run needs its own key", c.RunID(), fn, k)
		}
		seen[k] = true
	}
	return nil
}

// awaitChildren parks the run until w is met (the store makes it due at once
// if it already is).
func (c *Ctx) awaitChildren(ctx context.Context, w store.ChildWait, why string) error {
	if err := c.fenced(c.e.store.AwaitChildren(ctx, c.f, w, c.e.now())); err != nil {
		return err
	}
	spanEvent(ctx, store.EventSuspended, c.e.worker, w.Detail(), "")
	return c.parked(why, "children", w.Marker())
}

// deferEntry leaves the entry of a fresh operation that made no database
// effect pending (as a plain step's): written before the next durable
// operation or with the run's outcome.
func (c *Ctx) deferEntry(e JournalEntry) error {
	if err := c.cross(BeforeCommit, e, false); err != nil {
		return err
	}
	c.deferWrite(e)
	return nil
}
