package db

import (
	"sync"
	"sync/atomic"
)

// EventKind says what an Event is.
type EventKind int

// The exchanges a pool has with its database.
const (
	// Statement: one Exec, Query, QueryRow, QueryMaps or ExecRaw.
	Statement EventKind = iota
	// Begin, Commit and Rollback: a transaction's boundaries.
	Begin
	Commit
	Rollback
)

// Event is one exchange of a pool with its database, as an observer sees it
// (Observe). Each event is one round trip asked of the driver (PostgreSQL:
// a statement's first use on a connection adds a Prepare, not counted).
type Event struct {
	Kind EventKind
	// SQL and Args are a Statement's text (with ? placeholders, as the
	// caller wrote it) and arguments.
	SQL  string
	Args []any
	// Writes is true for a Statement that may write; InTx for one run
	// inside a transaction.
	Writes, InTx bool
}

// observer holds the function Observe installed, if any.
type observer struct{ fn atomic.Pointer[func(Event)] }

func (o *observer) emit(e Event) {
	if fn := o.fn.Load(); fn != nil {
		(*fn)(e)
	}
}

// Observe makes fn see every exchange of d's pool (every *DB of the pool
// and its transactions) until stop is called: for the tests that count
// statements, round trips and commits, and the plan tests that replay a
// workload's statements. fn runs on the caller's goroutine, possibly under
// the pool's locks: it must be quick and must not use the pool. One
// observer at a time: a second Observe replaces the first.
func (d *DB) Observe(fn func(Event)) (stop func()) {
	d.p.obs.fn.Store(&fn)
	return func() { d.p.obs.fn.CompareAndSwap(&fn, nil) }
}

// Counts are the exchanges a Counter saw.
type Counts struct {
	// Statements counts statements; RoundTrips statements and transaction
	// boundaries; Commits the commits asked of the database: COMMITs and
	// writing statements outside a transaction (each its own commit).
	Statements, RoundTrips, Commits int64
}

// Counter tallies the events it is given (Observe(c.Add)).
type Counter struct {
	mu sync.Mutex
	c  Counts
}

// Add counts e.
func (c *Counter) Add(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.c.RoundTrips++
	switch {
	case e.Kind == Statement:
		c.c.Statements++
		if e.Writes && !e.InTx {
			c.c.Commits++
		}
	case e.Kind == Commit:
		c.c.Commits++
	}
}

// Take returns the counts since the last Take and starts again from zero.
func (c *Counter) Take() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.c
	c.c = Counts{}
	return n
}
