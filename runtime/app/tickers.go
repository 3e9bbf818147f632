package app

import (
	"fmt"
	"sort"
	"time"

	"skydurable/runtime/value"
)

// ticker is one running Sub.every.
type ticker struct {
	every Every
	tk    Ticker
	stop  chan struct{}
	gen   int
	seq   int // start order, for fireAll
}

// message is the message of a tick at time at.
func (t *ticker) message(at time.Time) (value.Value, error) {
	if t.every.ToMsg != nil {
		return value.Apply(t.every.ToMsg, at.UnixMilli())
	}
	return t.every.Msg, nil
}

// tickerKeys identifies each Sub.every across re-evaluations: its interval
// and message, or for Sub.everyWithTime its interval and position among
// those of the same interval; a repeated key gets its occurrence number.
func tickerKeys(es []Every) []string {
	keys := make([]string, len(es))
	seen := map[string]int{}
	for i, e := range es {
		var base string
		if e.ToMsg != nil {
			base = fmt.Sprintf("everyWithTime %d", e.Interval.Milliseconds())
		} else {
			base = fmt.Sprintf("every %d %s", e.Interval.Milliseconds(), value.Show(e.Msg))
		}
		seen[base]++
		keys[i] = fmt.Sprintf("%s #%d", base, seen[base])
	}
	return keys
}

// subscribe re-evaluates subscriptions model and starts, keeps or stops
// feeds and tickers to match.
func (l *loop) subscribe() error {
	if l.p.Subscriptions == nil {
		return nil
	}
	r, err := value.Apply(l.p.Subscriptions, l.model)
	if err != nil {
		return err
	}
	s, err := SubOf("App subscriptions", r)
	if err != nil {
		return err
	}
	l.subscribeFeeds(s)
	keys := tickerKeys(s.everies)
	want := make(map[string]bool, len(keys))
	for i, key := range keys {
		want[key] = true
		if t, ok := l.tickers[key]; ok {
			t.every = s.everies[i] // keep the phase, take the fresh message
			continue
		}
		l.gen++
		t := &ticker{every: s.everies[i], tk: l.o.NewTicker(s.everies[i].Interval), stop: make(chan struct{}), gen: l.gen, seq: l.gen}
		l.tickers[key] = t
		go l.forward(key, t)
	}
	for key, t := range l.tickers {
		if !want[key] {
			t.halt()
			delete(l.tickers, key)
		}
	}
	return nil
}

// forward sends t's ticks to the loop until t stops or the loop ends.
func (l *loop) forward(key string, t *ticker) {
	for {
		select {
		case at := <-t.tk.C():
			select {
			case l.events <- event{kind: evTick, key: key, gen: t.gen, at: at}:
			case <-t.stop:
				return
			case <-l.done:
				return
			}
		case <-t.stop:
			return
		case <-l.done:
			return
		}
	}
}

func (t *ticker) halt() {
	t.tk.Stop()
	close(t.stop)
}

// stopTickers stops every ticker.
func (l *loop) stopTickers() {
	for key, t := range l.tickers {
		t.halt()
		delete(l.tickers, key)
	}
}

// tickerKeys lists the running tickers in start order.
func (l *loop) tickerKeys() []string {
	keys := make([]string, 0, len(l.tickers))
	for k := range l.tickers {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return l.tickers[keys[i]].seq < l.tickers[keys[j]].seq })
	return keys
}
