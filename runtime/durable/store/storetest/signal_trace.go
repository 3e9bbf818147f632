package storetest

import (
	"time"

	"skydurable/runtime/durable/store"
)

func init() { cases = append(cases, signalTraceCases...) }

// signalTraceCases pin the sender's trace context stored with a signal and
// handed to the consumer (PutSignal, ConsumeSignal).
var signalTraceCases = []storeCase{
	{"SignalCarriesItsSendersTraceContext", func(f *fixture) {
		const sender = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		f.insert("r", "w", 1, T0)
		f.ok("PutSignal", errOf(f.s.PutSignal(f.ctx, "r", "traced", `1`, sender, T0)))
		f.ok("PutSignal", errOf(f.s.PutSignal(f.ctx, "r", "plain", `2`, "", T0)))
		f.ok("PutSignal", errOf(f.s.PutSignal(f.ctx, "r", "replaced", `3`, sender, T0)))
		if ok, err := f.s.ReplaceSignal(f.ctx, "r", "replaced", `4`, T0); err != nil || !ok {
			f.t.Fatalf("ReplaceSignal = %v, %v", ok, err)
		}
		f.claim(T0, "A", "r")
		for i, c := range []struct{ name, payload, trace string }{
			{"traced", `1`, sender},
			{"plain", `2`, ""},
			// The operator's payload is not the sender's: its trace goes.
			{"replaced", `4`, ""},
		} {
			var payload, trace string
			found, err := f.s.ConsumeSignal(f.ctx, store.Fence{RunID: "r", Token: "A"}, c.name,
				store.JournalEntry{Seq: i + 1, StepID: c.name, Kind: store.KindSignal},
				func(p, tc string) (string, error) { payload, trace = p, tc; return p, nil }, T0.Add(time.Second))
			if err != nil || !found || payload != c.payload || trace != c.trace {
				f.t.Errorf("ConsumeSignal(%s) = %v, %v, payload %s, trace context %q; want %s, %q", c.name, found, err, payload, trace, c.payload, c.trace)
			}
		}
	}},
}
