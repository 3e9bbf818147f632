package app

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"skydurable/runtime/value"
)

// sliceFeed is a Feed giving vals in order, then end (or failing with err).
func sliceFeed(key string, vals []value.Value, err error, toMsg value.Value) (Feed, *atomic.Int32) {
	var pos atomic.Int32
	next := func(ctx context.Context) (value.Value, bool, error) {
		i := int(pos.Load())
		if i < len(vals) {
			pos.Add(1)
			return vals[i], true, nil
		}
		return nil, false, err
	}
	return Feed{Key: key, Next: next, ToMsg: toMsg}, &pos
}

var appendMsg = fn2("update", func(msg, model value.Value) (value.Value, error) {
	return pair(model.(string)+msg.(string), Cmd{}), nil
})

// TestFeedValuesBecomeMessagesUntilItEnds: each value of a Feed is a message
// through ToMsg, in order; when the feed ends nothing keeps the program
// alive, though subscriptions still returns it; a failing feed ends the
// same way, reported on Stderr.
func TestFeedValuesBecomeMessagesUntilItEnds(t *testing.T) {
	for _, c := range []struct {
		err    error
		stderr string
	}{{nil, ""}, {errors.New("the stream broke"), "App: the subscription lines ended: the stream broke\n"}} {
		feed, _ := sliceFeed("lines", []value.Value{"a", "b", "c"}, c.err, fn1("Line", func(v value.Value) (value.Value, error) { return strings.ToUpper(v.(string)), nil }))
		p := Program{Init: initWith("", Cmd{}), Update: appendMsg, View: showView,
			Subscriptions: fn1("subs", func(value.Value) (value.Value, error) { return SubValue(FeedSub(feed)), nil })}
		stderr := &syncBuffer{}
		out, err := run(t, context.Background(), p, Options{Stderr: stderr})
		if err != nil {
			t.Fatal(err)
		}
		if want := "model: \"\"\nmodel: \"A\"\nmodel: \"AB\"\nmodel: \"ABC\"\n"; out != want {
			t.Errorf("output:\n%s\nwant:\n%s", out, want)
		}
		if stderr.String() != c.stderr {
			t.Errorf("stderr %q, want %q", stderr.String(), c.stderr)
		}
	}
}

// TestADroppedFeedStops: a feed subscriptions no longer returns stops
// being read, and the program ends with the values it did not take still
// in the source.
func TestADroppedFeedStops(t *testing.T) {
	feed, pos := sliceFeed("lines", []value.Value{"a", "b", "c", "d"}, nil, fn1("Line", func(v value.Value) (value.Value, error) { return v, nil }))
	subs := fn1("subs", func(m value.Value) (value.Value, error) {
		if len(m.(string)) < 2 {
			return SubValue(FeedSub(feed)), nil
		}
		return SubValue(Sub{}), nil
	})
	p := Program{Init: initWith("", Cmd{}), Update: appendMsg, View: showView, Subscriptions: subs}
	out, err := run(t, context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "model: \"\"\nmodel: \"a\"\nmodel: \"ab\"\n"; out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if n := pos.Load(); n == 4 {
		t.Errorf("the dropped feed was read to its end (%d values)", n)
	}
}
