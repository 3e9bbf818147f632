// Package store is the seam between the durable engine and its database:
// the Store interface (everything the engine asks of the database, every
// write fenced by a lease token), the run state machine (Machine, and the
// status lists every SQL statement names, derived from it), the migration
// procedure both stores follow (Migrator), and the types they share (Run,
// JournalEntry, SignalInfo, Fence). One package per database implements
// Store (store/postgres, store/sqlite) and passes the one conformance suite
// (store/storetest). Notifications are part of Store too (Notifier: a run
// finished, a run fell due), so the engine needs no driver to wait.
//
// It may import runtime/db, runtime/task and the standard library; never
// the engine above it (runtime/durable and its other subpackages).
package store
