package store

import (
	"fmt"
	"sync"

	"skydurable/runtime/db"
)

// Opener makes a dialect's Store over d, configured by c.
type Opener func(d *db.DB, c Config) Store

// Config is what an engine opens its Store with.
type Config struct {
	// Hook (nil: none) sees every statement sent.
	Hook StatementHook
	// Beats says the engine holds each run it claims by heartbeats
	// (RenewLease every third of the lease until the attempt ends), so a
	// journalled step need not renew the lease as well: a store may then
	// leave it alone (AppendEntry). The zero value, no heartbeats, renews
	// it at every step.
	Beats bool
}

// openers is every registered Opener by dialect (Register, Open).
var openers = struct {
	sync.RWMutex
	by map[db.Dialect]Opener
}{by: map[db.Dialect]Opener{}}

// Register makes open the Store of dialect. Each store package calls it
// from its init, so a new store is its package (and the storetest suite it
// passes) plus one import in store/stores. Registering a dialect twice
// panics: two stores for one database is a build mistake.
func Register(dialect db.Dialect, open Opener) {
	openers.Lock()
	defer openers.Unlock()
	if _, dup := openers.by[dialect]; dup {
		panic(fmt.Sprintf("store: a store for %s is registered twice", dialect))
	}
	openers.by[dialect] = open
}

// Open makes the Store registered for d's dialect; it is an error naming the
// dialect when no store package for it is compiled in.
func Open(d *db.DB, c Config) (Store, error) {
	openers.RLock()
	open, ok := openers.by[d.Dialect()]
	openers.RUnlock()
	if !ok {
		return nil, fmt.Errorf("no durable store is registered for %s databases (import skydurable/runtime/durable/store/stores, or the store's package)", d.Dialect())
	}
	return open(d, c), nil
}
