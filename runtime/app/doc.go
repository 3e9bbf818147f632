// Package app is Sky's TEA runtime (Std.App): it runs a program's init,
// update, view and subscriptions over value.Value, calling the Sky functions
// through value.Apply.
//
// Guarantees:
//
//   - Updates are serialised: one goroutine calls update, view and
//     subscriptions, one message at a time, in arrival order.
//   - Cmd.perform runs its Task off the loop, concurrently with other
//     commands; its outcome comes back as `toMsg (Ok v)` or `toMsg (Err e)`.
//     A failing Task never stops the loop.
//   - After init and after every update the loop re-evaluates
//     `subscriptions model`. Tickers are identified by their interval and
//     message (Sub.every) or by their interval and position
//     (Sub.everyWithTime): a ticker that stays keeps its phase and picks up
//     the new message, a new one starts, a missing one stops.
//   - A Feed (Process.events) is identified by its key: each value its
//     source gives becomes a message through the Feed's current ToMsg, the
//     next asked for only after that message's update; a feed no longer
//     returned stops, and one whose source ended no longer keeps the
//     program alive.
//   - The loop prints `view model` after init and after each update, also
//     when it did not change (one line per update, as sky-language.md says).
//   - With App.withDurable (Program.Snapshots) the model is restored at start
//     and saved after each update that changed it, before its view is
//     printed, with a sequence number that only grows (write-if-newer). A
//     snapshot that does not decode is reported on stderr; the program boots
//     from init and never overwrites the stored snapshot.
//   - The loop ends when it reads input and stdin reaches EOF (after the
//     commands in flight and the messages queued have been handled), or,
//     without input, when nothing is queued, in flight or subscribed.
//   - A stop request (ctx cancelled, or one of Options.StopSignals) ends the
//     loop after the update in progress: tickers and input stop at once,
//     commands in flight get Options.ShutdownGrace to finish (their results
//     are still applied, their new commands are not performed), then the
//     rest are cancelled. A stop is a clean exit, not an error.
//
// Effects from outside the loop (a PostgreSQL NOTIFY listener, say) reach it
// through the Waker found in the context of every Task the loop runs: Wake
// fires every current ticker's message now.
//
// It may import runtime/task, runtime/value and the standard library; never
// compiler/ or stdlib/ (nothing in runtime/ does).
package app
