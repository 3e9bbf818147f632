package durable

import (
	"context"

	rapp "skydurable/runtime/app"
	"skydurable/runtime/db"
	"skydurable/runtime/durable"
)

// NOTIFY hints inside an App loop: Std.App's App.run puts the environment's
// durable.HintSettings in the context of its commands, and the poll kernels
// attach a hint listener to the loop, so a hint fires the loop's tickers at
// once. The engine itself knows nothing of the loop.

type hintSettingsKey struct{}

// WithHintSettings returns ctx carrying s. Std.App's App.run puts the
// settings of the environment there, so every poll kernel run by the app's
// commands can wake the app on hints.
func WithHintSettings(ctx context.Context, s durable.HintSettings) context.Context {
	return context.WithValue(ctx, hintSettingsKey{}, s)
}

// wakeAppOnHints is WakeAppOnHints with the settings found in ctx; without
// settings (not inside an App) it does nothing.
func wakeAppOnHints(ctx context.Context, d *db.DB) {
	if s, ok := ctx.Value(hintSettingsKey{}).(durable.HintSettings); ok {
		WakeAppOnHints(ctx, d, s, s.Report)
	}
}

// hintListenerKey identifies one listener per database per App loop.
type hintListenerKey struct{ d *db.DB }

// WakeAppOnHints makes hints wake the App loop running the current Task
// (Durable.poll's kernel calls it with its Task's ctx). Outside an App loop,
// on SQLite, or with settings.Off it does nothing; otherwise it starts, once
// per database for the life of the loop, a hint watch (on the process's one
// listening session per database, shared with every other waiter) whose
// hints fire the loop's tickers at once. Problems go to report; the tick
// keeps working.
func WakeAppOnHints(ctx context.Context, d *db.DB, settings durable.HintSettings, report func(string)) {
	if report == nil {
		report = func(string) {}
	}
	w, ok := rapp.WakerFrom(ctx)
	if !ok || settings.Off || d.Dialect() != db.Postgres {
		return
	}
	settings = settings.For(d)
	w.Attach(hintListenerKey{d}, func(life context.Context, wake func()) {
		if !settings.Listens() {
			report("durable hints: " + settings.NoURL + "; polling on the tick only")
			return
		}
		if err := durable.ListenForHints(life, d, settings.URL, func(string) { wake() }, report); err != nil && life.Err() == nil {
			report(err.Error() + "; polling on the tick only")
		}
	})
}
