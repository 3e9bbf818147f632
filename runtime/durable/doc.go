// Package durable is the journal engine behind Sky's Std.Durable: durable,
// resumable workflows whose side-effecting steps run effectively once.
//
// A workflow is an ordinary task.Task built from a body func(*Ctx, I). Step
// marks an effect boundary whose result is journalled; when the run resumes
// (after a crash, a sleep or a signal) the body re-runs from the top and each
// journalled step returns its recorded value instead of running again. Sleep
// and AwaitSignal suspend the run by failing with the suspend sentinel
// (IsSuspend); Poll, the runner, records the outcome: done, suspended,
// failed (retried with backoff) or dead.
//
// Storage is three tables of the spec (_sky_durable_runs, _sky_durable_journal,
// _sky_durable_signals) plus _sky_durable_snapshot, on PostgreSQL or SQLite
// through runtime/db. The engine builds no SQL: it talks to a store.Store
// (runtime/durable/store, with the run state machine store.Machine), whose
// implementations are runtime/durable/store/postgres and
// runtime/durable/store/sqlite, each proven by the shared suite in
// runtime/durable/store/storetest. The Sky binding (Std.Durable) is
// stdlib/durable; this package knows nothing of Sky values or the App loop.
//
// Operations (ops.go, versions.go): ListRuns filters runs on an index (`sky
// durable ls`); a run is stamped with its workflow version at Start and Poll
// dispatches on (name, version) under a VersionPolicy (PinToStart by
// default, or FailSafe); CompactOlderThan deletes the journal of finished
// runs in short batches; Cancel stops a run at its next step boundary. See
// docs/durable.md for the guarantees, the schema and operations.
//
// It may import its stores (runtime/durable/store and, until the store seam
// is finished, store/postgres and store/sqlite), runtime/db, runtime/codec,
// runtime/task, the OpenTelemetry API and the standard library; never a Sky
// value (runtime/value), the TEA runtime (runtime/app), compiler/ or stdlib/,
// and no database driver: notifications (LISTEN/NOTIFY) come from the store
// (store.Notifier).
package durable
