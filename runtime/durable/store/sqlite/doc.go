// Package sqlite is the durable store on SQLite: every SQL text of
// store.Store for this dialect and its numbered migrations
// (migrations/*.sql). Times are Unix milliseconds (store.InfinityMs for a
// run parked on a signal), the clock is always passed in, and SQLite
// serialises writers, so no statement here needs a row lock.
// store/storetest holds its promises.
//
// It may import runtime/durable/store, runtime/db and the standard library;
// never the engine (runtime/durable), which reaches it only through
// store.Store.
package sqlite
