package app

import (
	"context"
	"fmt"
	"time"

	"skydurable/runtime/value"
)

// Cmd is Sky's `Cmd msg`: the effects an update asks the loop to perform.
// The zero Cmd is Cmd.none.
type Cmd struct {
	performs []Perform
}

// Perform is one Cmd.perform: run Task off the loop, then feed
// `ToMsg (Ok v)` or `ToMsg (Err e)` back as a message.
type Perform struct {
	Task  value.Task
	ToMsg value.Value
}

// PerformCmd is `Cmd.perform t toMsg`.
func PerformCmd(t value.Task, toMsg value.Value) Cmd {
	return Cmd{performs: []Perform{{Task: t, ToMsg: toMsg}}}
}

// Batch is `Cmd.batch cmds`: all of them, in order.
func Batch(cmds ...Cmd) Cmd {
	var out Cmd
	for _, c := range cmds {
		out.performs = append(out.performs, c.performs...)
	}
	return out
}

// Performs lists the effects of c in order.
func (c Cmd) Performs() []Perform { return c.performs }

// Sub is Sky's `Sub msg`: what the program listens to. The zero Sub is
// Sub.none.
type Sub struct {
	everies []Every
	feeds   []Feed
}

// Every is one Sub.every (Msg set) or Sub.everyWithTime (ToMsg set, called
// with the tick time in epoch milliseconds).
type Every struct {
	Interval time.Duration
	Msg      value.Value
	ToMsg    value.Value
}

// Feed is a subscription to a source of values outside the loop (real Sky's
// Process.events): Key names it across re-evaluations of subscriptions,
// Next blocks until the source's next value (ok false once it has no more;
// an error ends the feed and is reported), and ToMsg makes each value a
// message. The source keeps its own position, so a feed dropped and
// returned later continues where it stopped.
type Feed struct {
	Key   string
	Next  func(ctx context.Context) (v value.Value, ok bool, err error)
	ToMsg value.Value
}

// FeedSub is a Sub of one Feed.
func FeedSub(f Feed) Sub { return Sub{feeds: []Feed{f}} }

// EverySub is `Sub.every ms msg`. The interval must be positive.
func EverySub(ms int64, msg value.Value) (Sub, error) {
	if ms <= 0 {
		return Sub{}, fmt.Errorf("Sub.every needs a positive interval in milliseconds, but got %d; hint: Sub.every 1000 Tick ticks once a second", ms)
	}
	return Sub{everies: []Every{{Interval: time.Duration(ms) * time.Millisecond, Msg: msg}}}, nil
}

// EveryWithTimeSub is `Sub.everyWithTime ms toMsg`. The interval must be
// positive.
func EveryWithTimeSub(ms int64, toMsg value.Value) (Sub, error) {
	if ms <= 0 {
		return Sub{}, fmt.Errorf("Sub.everyWithTime needs a positive interval in milliseconds, but got %d", ms)
	}
	return Sub{everies: []Every{{Interval: time.Duration(ms) * time.Millisecond, ToMsg: toMsg}}}, nil
}

// BatchSub is `Sub.batch subs`.
func BatchSub(subs ...Sub) Sub {
	var out Sub
	for _, s := range subs {
		out.everies = append(out.everies, s.everies...)
		out.feeds = append(out.feeds, s.feeds...)
	}
	return out
}

// Everies lists the tickers of s in order.
func (s Sub) Everies() []Every { return s.everies }

// Kind names of the Opaque values that carry a Cmd, a Sub and an App
// through Sky.
const (
	CmdKind = "Cmd"
	SubKind = "Sub"
)

// CmdValue wraps c as a Sky value.
func CmdValue(c Cmd) value.Value { return value.Opaque{Kind: CmdKind, V: c} }

// SubValue wraps s as a Sky value.
func SubValue(s Sub) value.Value { return value.Opaque{Kind: SubKind, V: s} }

// CmdOf reads a Sky `Cmd msg`; where names the caller in the error.
func CmdOf(where string, v value.Value) (Cmd, error) {
	if o, ok := v.(value.Opaque); ok {
		if c, ok := o.V.(Cmd); ok {
			return c, nil
		}
	}
	return Cmd{}, value.BadArg(where, "a Cmd (Cmd.none, Cmd.batch or Cmd.perform)", v)
}

// SubOf reads a Sky `Sub msg`; where names the caller in the error.
func SubOf(where string, v value.Value) (Sub, error) {
	if o, ok := v.(value.Opaque); ok {
		if s, ok := o.V.(Sub); ok {
			return s, nil
		}
	}
	return Sub{}, value.BadArg(where, "a Sub (Sub.none, Sub.batch or Sub.every)", v)
}
