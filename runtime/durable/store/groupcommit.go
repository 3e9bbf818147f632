package store

import (
	"context"
	"sync"

	"skydurable/runtime/task"
)

// GroupCommit batches writes of one kind made concurrently by the runs one
// Engine advances (its pollers) into one statement or transaction and one
// commit: group commit across runs (the PostgreSQL store's batched
// statements, the SQLite store's shared transactions). It holds no goroutine. A caller that finds fewer than
// flights batches in flight leads at once: it writes its own request alone,
// with no added wait, so a lone run pays exactly what an unbatched write
// costs. Callers arriving while flights batches are in flight queue; when a
// batch ends its leader hands the lead to the first of them, who writes it
// with everything queued behind it (up to max) as the next batch. Under
// load, batches grow by themselves to about the number of runs waiting to
// write.
//
// A queued caller waits for its batch even when its context ends: its row
// may be in a statement already sent, and it must learn whether the row
// committed. The statement itself runs detached from the leader's context
// for the same reason (every request in it shares its fate).
type GroupCommit[R any] struct {
	// write writes a batch and returns one error per request, in order.
	write func(ctx context.Context, batch []R) []error
	// max bounds a batch; the rest waits for the next one.
	max int
	// flights bounds the batches in flight at once.
	flights int

	mu      sync.Mutex
	leaders int // batches in flight; the queue is empty unless it is flights
	queue   []*groupRequest[R]
}

type groupRequest[R any] struct {
	r     R
	reply chan groupReply
}

// groupReply either carries a request's outcome or hands it the lead.
type groupReply struct {
	lead bool
	err  error
}

// NewGroupCommit makes a GroupCommit of batches of up to size requests,
// flights of them in flight at once, each written by write.
func NewGroupCommit[R any](size, flights int, write func(ctx context.Context, batch []R) []error) *GroupCommit[R] {
	return &GroupCommit[R]{write: write, max: size, flights: flights}
}

// Do writes r, alone or with the requests of other callers, and returns its
// own outcome.
func (g *GroupCommit[R]) Do(ctx context.Context, r R) error {
	me := &groupRequest[R]{r: r, reply: make(chan groupReply, 1)}
	g.mu.Lock()
	if g.leaders < g.flights {
		g.leaders++
		g.mu.Unlock()
	} else {
		g.queue = append(g.queue, me)
		g.mu.Unlock()
		if rep := <-me.reply; !rep.lead {
			return rep.err
		}
	}
	return g.lead(ctx, me)
}

// lead writes me and the requests queued behind it, then passes the lead to
// the next queued request, if any.
func (g *GroupCommit[R]) lead(ctx context.Context, me *groupRequest[R]) error {
	g.mu.Lock()
	n := min(len(g.queue), g.max-1)
	batch := append([]*groupRequest[R]{me}, g.queue[:n]...)
	g.queue = g.queue[n:]
	g.mu.Unlock()

	rs := make([]R, len(batch))
	for i, q := range batch {
		rs[i] = q.r
	}
	errs := g.write(context.WithoutCancel(ctx), rs)
	for i, q := range batch[1:] {
		q.reply <- groupReply{err: errs[i+1]}
	}

	g.mu.Lock()
	if len(g.queue) == 0 {
		g.leaders--
	} else {
		next := g.queue[0]
		g.queue = g.queue[1:]
		next.reply <- groupReply{lead: true}
	}
	g.mu.Unlock()
	return errs[0]
}

// Stopped reports whether done (a caller's ctx.Done()) is closed: a
// request whose caller stopped while it waited for its batch is written
// without what only that caller would use (the run a claim would lease).
func Stopped(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// ErrClaimCancelled is the error of a claim whose poller stopped while it
// waited for its batch: a run claimed for it would stay leased,
// unadvanced, until the lease expired, so none is.
var ErrClaimCancelled = task.New(task.Unavailable, "durable: the poll was cancelled before its claim")
