package app

import (
	"context"
	"fmt"

	"skydurable/runtime/value"
)

// feedRun is one running Feed: a goroutine pulls its values and sends them
// to the loop, one at a time (it asks for the next only after the loop has
// handled the last, so a feed that is dropped leaves the rest in its
// source), until the feed ends or is stopped.
type feedRun struct {
	feed   Feed
	gen    int
	cancel context.CancelFunc
	ack    chan struct{} // the loop handled the last value
	ended  bool          // the source has no more values (or failed)
}

// subscribeFeeds starts, keeps or stops feeds to match s: a kept feed takes
// the fresh ToMsg; one no longer returned stops.
func (l *loop) subscribeFeeds(s Sub) {
	want := make(map[string]bool, len(s.feeds))
	for _, f := range s.feeds {
		want[f.Key] = true
		if fr, ok := l.feeds[f.Key]; ok {
			fr.feed = f
			continue
		}
		l.gen++
		ctx, cancel := context.WithCancel(l.taskCtx)
		fr := &feedRun{feed: f, gen: l.gen, cancel: cancel, ack: make(chan struct{}, 1)}
		l.feeds[f.Key] = fr
		go l.pull(ctx, f, fr.gen, fr.ack)
	}
	for key, fr := range l.feeds {
		if !want[key] {
			fr.cancel()
			delete(l.feeds, key)
		}
	}
}

// pull sends f's values to the loop, each after the last was handled, then
// one event saying it ended.
func (l *loop) pull(ctx context.Context, f Feed, gen int, ack <-chan struct{}) {
	for {
		v, ok, err := f.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		ev := event{kind: evFeed, key: f.Key, gen: gen, result: v}
		switch {
		case value.IsRuntimeError(err):
			ev.fatal = err
		case err != nil:
			ev.feedErr = err
		}
		ev.feedEnd = err != nil || !ok
		select {
		case l.events <- ev:
		case <-ctx.Done():
			return
		case <-l.done:
			return
		}
		if ev.feedEnd {
			return
		}
		select {
		case <-ack:
		case <-ctx.Done():
			return
		case <-l.done:
			return
		}
	}
}

// ackFeed lets a feed still running after its value's update pull the next.
func (l *loop) ackFeed(ev event) {
	if fr, ok := l.feeds[ev.key]; ok && fr.gen == ev.gen {
		select {
		case fr.ack <- struct{}{}:
		default:
		}
	}
}

// feedMessage is the message of a feed's event; ok is false when it has
// none (the feed was stopped since, or it ended: an error is reported on
// Stderr).
func (l *loop) feedMessage(ev event) (msg value.Value, ok bool, err error) {
	if ev.fatal != nil {
		return nil, false, ev.fatal
	}
	fr, running := l.feeds[ev.key]
	if !running || fr.gen != ev.gen || fr.ended {
		return nil, false, nil
	}
	if ev.feedEnd {
		fr.ended = true
		if ev.feedErr != nil {
			fmt.Fprintf(l.o.Stderr, "App: the subscription %s ended: %v\n", ev.key, ev.feedErr)
		}
		return nil, false, nil
	}
	msg, err = value.Apply(fr.feed.ToMsg, ev.result)
	return msg, err == nil, err
}

// liveFeeds counts the feeds whose source may still send.
func (l *loop) liveFeeds() int {
	n := 0
	for _, fr := range l.feeds {
		if !fr.ended {
			n++
		}
	}
	return n
}

// stopFeeds stops every feed.
func (l *loop) stopFeeds() {
	for key, fr := range l.feeds {
		fr.cancel()
		delete(l.feeds, key)
	}
}
