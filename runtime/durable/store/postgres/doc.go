// Package postgres is the durable store on PostgreSQL: every SQL text of
// store.Store for this dialect, its numbered migrations (migrations/*.sql),
// the claim with FOR UPDATE SKIP LOCKED, the database's clock shared by all
// workers (a zero now), and the group commit that batches the statements of
// concurrent pollers. store/storetest holds its promises.
//
// It may import runtime/durable/store, runtime/db, runtime/task and the
// standard library; never the engine (runtime/durable), which reaches it
// only through store.Store.
package postgres
