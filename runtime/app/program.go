package app

import (
	"context"
	"io"
	"os"
	"time"

	"skydurable/runtime/value"
)

// Program is a TEA program as Sky functions (value.Func or anything
// value.Apply accepts).
type Program struct {
	// Init is `() -> ( model, Cmd msg )`.
	Init value.Value
	// Update is `msg -> model -> ( model, Cmd msg )`.
	Update value.Value
	// View is `model -> String`; nil prints nothing.
	View value.Value
	// Subscriptions is `model -> Sub msg`; nil is always Sub.none.
	Subscriptions value.Value
	// Input, when set, is `String -> msg`: each stdin line (without its
	// line ending) becomes a message, and stdin EOF ends the program.
	Input value.Value
	// Snapshots, when set, persists the model (App.withDurable).
	Snapshots *Snapshots
}

// Snapshots persists the model of a program between runs. The runtime
// restores the model at start and saves it after each update that changed
// it, with a sequence number that grows by one per saved update, continuing
// from the restored one.
type Snapshots struct {
	// ID names the snapshot (in messages too).
	ID string
	// Load reads the stored snapshot; found is false when there is none.
	Load func(ctx context.Context) (seq int64, data string, found bool, err error)
	// Save writes data under seq if seq is newer than the stored one and
	// reports whether it wrote.
	Save func(ctx context.Context, seq int64, data string) (bool, error)
	// Encode and Decode convert the model to and from its stored text.
	Encode func(model value.Value) (string, error)
	Decode func(data string) (value.Value, error)
}

// Ticker delivers ticks on C until Stop.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Options tune a Run. The zero value reads os.Stdin and writes os.Stdout and
// os.Stderr with real tickers.
type Options struct {
	Stdin  io.Reader
	Stdout io.Writer
	// Stderr receives reports (an undecodable snapshot, a failed save).
	Stderr io.Writer
	// NewTicker starts a ticker of the given period. Default: time.Ticker.
	NewTicker func(d time.Duration) Ticker
	// Now is the clock of ticks fired by a Waker. Default time.Now.
	Now func() time.Time
	// StopSignals end the loop cleanly, as a cancelled ctx does. Std.App
	// passes SIGINT and SIGTERM; the default is none.
	StopSignals []os.Signal
	// ShutdownGrace is how long a stop waits for commands in flight before
	// cancelling them. Default 5s.
	ShutdownGrace time.Duration
}

func (o Options) withDefaults() Options {
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.NewTicker == nil {
		o.NewTicker = newRealTicker
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 5 * time.Second
	}
	return o
}

type realTicker struct{ t *time.Ticker }

func newRealTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }
func (r realTicker) C() <-chan time.Time   { return r.t.C }
func (r realTicker) Stop()                 { r.t.Stop() }
