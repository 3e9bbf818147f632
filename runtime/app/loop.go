package app

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// Run runs p until it ends (see the package doc). It returns nil when the
// program ends normally or is stopped; an error is a runtime error of the
// program (update returned something other than a ( model, Cmd ) pair, a
// Task hit a program bug, ...) or a snapshot store that cannot be read.
func Run(ctx context.Context, p Program, opts Options) error {
	if p.Init == nil || p.Update == nil {
		return fmt.Errorf("App.run: the program needs init and update")
	}
	l := &loop{p: p, o: opts.withDefaults(), events: make(chan event, 64), done: make(chan struct{}), tickers: map[string]*ticker{}, feeds: map[string]*feedRun{}}
	life, endLife := context.WithCancel(context.WithoutCancel(ctx))
	l.waker = newWaker(life)
	tasks, cancelTasks := context.WithCancel(WithWaker(context.WithoutCancel(ctx), l.waker))
	l.taskCtx, l.cancelTasks = tasks, cancelTasks
	defer func() {
		close(l.done)
		l.stopTickers()
		l.stopFeeds()
		cancelTasks()
		endLife()
		l.waker.wait()
	}()
	var sigs chan os.Signal
	if len(l.o.StopSignals) > 0 {
		sigs = make(chan os.Signal, 1)
		signal.Notify(sigs, l.o.StopSignals...)
		defer signal.Stop(sigs)
	}
	if err := l.start(ctx); err != nil {
		return err
	}
	for !l.finished() {
		if ctx.Err() != nil {
			return l.shutdown()
		}
		select {
		case <-ctx.Done():
			return l.shutdown()
		case <-sigs:
			return l.shutdown()
		case <-l.waker.ch:
			if err := l.fireAll(); err != nil {
				return err
			}
		case ev := <-l.events:
			if err := l.handle(ev, true); err != nil {
				return err
			}
		}
	}
	return nil
}

type eventKind int

const (
	evResult eventKind = iota // a Cmd.perform finished
	evTick                    // a ticker fired
	evLine                    // a stdin line
	evEOF                     // stdin ended
	evFeed                    // a Feed's value, or its end
)

type event struct {
	kind   eventKind
	toMsg  value.Value
	result value.Value // Ok v or Err e, for evResult
	fatal  error       // a program bug inside a performed Task
	key    string
	gen    int
	at     time.Time
	line   string
	// feedEnd marks a Feed's last event (its source ended, or failed with
	// feedErr); it carries no value.
	feedEnd bool
	feedErr error
}

// loop is the state of one Run. Only the Run goroutine touches it, except
// the channels.
type loop struct {
	p      Program
	o      Options
	events chan event
	done   chan struct{}
	waker  *Waker

	taskCtx     context.Context
	cancelTasks context.CancelFunc
	inFlight    int

	model     value.Value
	tickers   map[string]*ticker
	feeds     map[string]*feedRun
	gen       int
	inputOpen bool

	saving    bool
	seq       int64
	lastSaved string
	warnedOld bool
}

// start runs init, restores the snapshot, and starts input, tickers and
// init's commands.
func (l *loop) start(ctx context.Context) error {
	r, err := value.Apply(l.p.Init, value.Unit{})
	if err != nil {
		return err
	}
	model, cmd, err := pairOf("init", r)
	if err != nil {
		return err
	}
	l.model = model
	if err := l.restore(ctx); err != nil {
		return err
	}
	if l.p.Input != nil {
		l.inputOpen = true
		go l.readInput()
	}
	if err := l.refresh(); err != nil {
		return err
	}
	l.perform(cmd)
	return nil
}

// finished reports whether the program has nothing left to do.
func (l *loop) finished() bool {
	if l.inFlight > 0 {
		return false
	}
	if l.p.Input != nil {
		return !l.inputOpen
	}
	return len(l.tickers) == 0 && l.liveFeeds() == 0
}

// handle applies one event; perform says whether the commands the update
// returns run (not during shutdown).
func (l *loop) handle(ev event, perform bool) error {
	var msg value.Value
	switch ev.kind {
	case evResult:
		l.inFlight--
		if ev.fatal != nil {
			return ev.fatal
		}
		m, err := value.Apply(ev.toMsg, ev.result)
		if err != nil {
			return err
		}
		msg = m
	case evTick:
		t, ok := l.tickers[ev.key]
		if !ok || t.gen != ev.gen {
			return nil // stopped since
		}
		m, err := t.message(ev.at)
		if err != nil {
			return err
		}
		msg = m
	case evLine:
		m, err := value.Apply(l.p.Input, ev.line)
		if err != nil {
			return err
		}
		msg = m
	case evEOF:
		l.inputOpen = false
		l.stopTickers()
		l.stopFeeds()
		return nil
	case evFeed:
		m, ok, err := l.feedMessage(ev)
		if err != nil || !ok {
			return err
		}
		if err := l.update(m, perform); err != nil {
			return err
		}
		l.ackFeed(ev)
		return nil
	}
	return l.update(msg, perform)
}

// update runs update msg model, then saves, re-subscribes, prints and
// performs.
func (l *loop) update(msg value.Value, perform bool) error {
	r, err := value.Apply(l.p.Update, msg, l.model)
	if err != nil {
		return err
	}
	model, cmd, err := pairOf("update", r)
	if err != nil {
		return err
	}
	l.model = model
	l.save()
	if err := l.refresh(); err != nil {
		return err
	}
	if perform {
		l.perform(cmd)
	}
	return nil
}

// refresh re-evaluates the subscriptions and prints the view (after init and
// after every update, as sky-language.md says, even when it did not change),
// with no newline added.
func (l *loop) refresh() error {
	if l.p.Input == nil || l.inputOpen {
		if err := l.subscribe(); err != nil {
			return err
		}
	}
	if l.p.View == nil {
		return nil
	}
	v, err := value.Apply(l.p.View, l.model)
	if err != nil {
		return err
	}
	text, ok := v.(string)
	if !ok {
		return value.BadArg("App view", "a String", v)
	}
	// Exactly as returned, as real Sky prints it: a view ends its own lines.
	fmt.Fprint(l.o.Stdout, text)
	return nil
}

// perform starts each Task of c off the loop.
func (l *loop) perform(c Cmd) {
	for _, pf := range c.performs {
		l.inFlight++
		go func() {
			v, err := task.Run(l.taskCtx, pf.Task.T)
			ev := event{kind: evResult, toMsg: pf.ToMsg}
			switch {
			case err == nil:
				ev.result = value.Ok(v)
			case value.IsRuntimeError(err):
				ev.fatal = err
			default:
				ev.result = value.Err(value.FromError(err))
			}
			select {
			case l.events <- ev:
			case <-l.done:
			}
		}()
	}
}

// fireAll delivers every current ticker's message now (a Waker's Wake).
func (l *loop) fireAll() error {
	now := l.o.Now()
	for _, key := range l.tickerKeys() {
		t, ok := l.tickers[key]
		if !ok {
			continue
		}
		if err := l.handle(event{kind: evTick, key: key, gen: t.gen, at: now}, true); err != nil {
			return err
		}
	}
	return nil
}

// shutdown ends the loop after a stop request: no more ticks or input;
// commands in flight get the grace period, their results are applied but
// their new commands are not performed.
func (l *loop) shutdown() error {
	l.stopTickers()
	l.stopFeeds()
	grace := time.NewTimer(l.o.ShutdownGrace)
	defer grace.Stop()
	cancelled := false
	for l.inFlight > 0 {
		select {
		case ev := <-l.events:
			if ev.kind != evResult {
				continue
			}
			if err := l.handle(ev, false); err != nil {
				return err
			}
		case <-grace.C:
			if cancelled {
				fmt.Fprintf(l.o.Stderr, "App: stopped with %d command(s) still running after cancellation\n", l.inFlight)
				return nil
			}
			l.cancelTasks()
			cancelled = true
			grace.Reset(l.o.ShutdownGrace)
		}
	}
	return nil
}

// readInput sends each stdin line, then EOF.
func (l *loop) readInput() {
	send := func(ev event) bool {
		select {
		case l.events <- ev:
			return true
		case <-l.done:
			return false
		}
	}
	err := scanLines(l.o.Stdin, func(line string) bool { return send(event{kind: evLine, line: line}) })
	if err != nil {
		fmt.Fprintf(l.o.Stderr, "App: reading stdin failed: %v; treating it as the end of input\n", err)
	}
	send(event{kind: evEOF})
}

// pairOf reads the ( model, Cmd msg ) pair init and update return.
func pairOf(who string, r value.Value) (value.Value, Cmd, error) {
	t, ok := r.(value.Tuple)
	if !ok || len(t) != 2 {
		return nil, Cmd{}, value.BadArg("App "+who, "to return a ( model, Cmd msg ) pair", r)
	}
	c, err := CmdOf("App "+who+" (second element of the pair)", t[1])
	if err != nil {
		return nil, Cmd{}, err
	}
	return t[0], c, nil
}
