package app

import (
	"context"
	"sync"
)

// Waker lets code running inside the loop's Tasks wake the loop from
// outside: Wake fires every current ticker's message at once (a PostgreSQL
// NOTIFY hint makes an idle durable worker poll now instead of at its next
// tick). Several Wakes before the loop reacts count as one.
type Waker struct {
	ch   chan struct{}
	life context.Context

	mu       sync.Mutex
	attached map[any]bool
	wg       sync.WaitGroup
}

func newWaker(life context.Context) *Waker {
	return &Waker{ch: make(chan struct{}, 1), life: life, attached: map[any]bool{}}
}

// Wake asks the loop to fire its tickers now. It never blocks.
func (w *Waker) Wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// Attach runs start once per key for the life of the loop, in its own
// goroutine, with a context that ends when the loop ends and the Waker's
// Wake. Later calls with the same key do nothing; it reports whether this
// call started it. Use it to start one listener per database.
func (w *Waker) Attach(key any, start func(ctx context.Context, wake func())) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.attached[key] || w.life.Err() != nil {
		return false
	}
	w.attached[key] = true
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		start(w.life, w.Wake)
	}()
	return true
}

// wait waits for the attached goroutines after their context ended.
func (w *Waker) wait() { w.wg.Wait() }

type wakerKey struct{}

// WithWaker returns ctx carrying w.
func WithWaker(ctx context.Context, w *Waker) context.Context {
	return context.WithValue(ctx, wakerKey{}, w)
}

// WakerFrom returns the Waker of the loop running the current Task; ok is
// false outside a loop.
func WakerFrom(ctx context.Context) (w *Waker, ok bool) {
	w, ok = ctx.Value(wakerKey{}).(*Waker)
	return w, ok && w != nil
}
