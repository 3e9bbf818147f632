package host

import (
	"context"
	"errors"
	"time"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// readTask reads a stream of a Process from an offset: it waits for a byte
// or the stream's end, or, with a positive within, at most that long.
func readTask(fn string, p, s, from value.Value, within time.Duration) (value.Value, error) {
	c, err := childArg(fn, p)
	if err != nil {
		return nil, err
	}
	stream, ok := s.(value.Ctor)
	if !ok || (stream.Name != "Stdout" && stream.Name != "Stderr") {
		return nil, value.BadArg(fn, "a Stream", s)
	}
	offset, ok := from.(int64)
	if !ok {
		return nil, value.BadArg(fn, "an Int offset", from)
	}
	r := c.out[0]
	if stream.Name == "Stderr" {
		r = c.out[1]
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		if err := c.open(fn); err != nil {
			return nil, err
		}
		if err := c.readBy(fn, "Task"); err != nil {
			return nil, err
		}
		var timeout <-chan time.Time
		if fn == "Process.readWithin" {
			t := time.NewTimer(within)
			defer t.Stop()
			timeout = t.C
		}
		chunk, err := r.read(ctx, offset, timeout)
		if errors.Is(err, errPastEnd) {
			return nil, task.Errorf(task.InvalidInput, "%s %q %s %d: %w", fn, c.program, stream.Name, offset, err)
		}
		return chunk, err
	})}, nil
}

// readBy fixes how the output is read, "Task" (readFrom, readWithin) or
// "Sub" (events), at the first read; reading it the other way after fails
// InvalidInput (real Sky's rule: one consumer a process).
func (c *child) readBy(what, how string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reader == "" {
		c.reader = how
	}
	if c.reader != how {
		other := map[string]string{"Task": "readFrom", "Sub": "Process.events"}[c.reader]
		return task.Errorf(task.InvalidInput, "%s: the output of %q is already read with %s; hint: read a process one way, with readFrom/readWithin or with Process.events", what, c.program, other)
	}
	return nil
}

// nextEvent is the events subscription's next Event: the output of either
// stream from where it stopped, then Exited once the child has exited and
// both streams have ended; then no more.
func (c *child) nextEvent(ctx context.Context) (value.Value, bool, error) {
	if err := c.open("Process.events"); err != nil {
		return nil, false, err
	}
	if err := c.readBy("Process.events", "Sub"); err != nil {
		return nil, false, err
	}
	for {
		c.mu.Lock()
		if c.evExited {
			c.mu.Unlock()
			return nil, false, nil
		}
		var waits [2]<-chan struct{}
		ended := 0
		for i, r := range c.out {
			ch, ready, changed, err := r.poll(c.evNext[i])
			if err != nil {
				c.mu.Unlock()
				return nil, false, err
			}
			if ready && ch.next > ch.from {
				c.evNext[i] = ch.next
				c.mu.Unlock()
				stream := value.Ctor{Name: [2]string{"Stdout", "Stderr"}[i]}
				return value.Ctor{Name: "Output", Args: []value.Value{stream, ch.record()}}, true, nil
			}
			if ch.eof {
				ended++
			}
			waits[i] = changed
		}
		exited := false
		select {
		case <-c.exited:
			exited = true
		default:
		}
		if exited && ended == len(c.out) {
			c.evExited = true
			c.mu.Unlock()
			return value.Ctor{Name: "Exited", Args: []value.Value{exitStatus(c.state)}}, true, nil
		}
		c.mu.Unlock()
		var exit <-chan struct{} // nil once exited: an ended stream's is nil too, so nothing fires twice
		if !exited {
			exit = c.exited
		}
		select {
		case <-waits[0]:
		case <-waits[1]:
		case <-exit:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}
