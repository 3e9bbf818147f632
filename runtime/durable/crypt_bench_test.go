package durable

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// BenchmarkEncryptionCost measures what encryption at rest (Options.Keys)
// costs throughput, on each store: one poller drains runs of a 3-step
// workflow (an input and step results of ~200 bytes) without keys and with
// one, in alternating rounds on the same database so both see the same
// load, and reports the best round's runs per second of each and their
// ratio (docs/benchmarks.md, "Encryption at rest").
func BenchmarkEncryptionCost(b *testing.B) {
	const runs, rounds = 300, 5
	payload := strings.Repeat("x", 200)
	w := Register("bench.crypt", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(Step(c, str, "a", task.Succeed(in)), func(a string) task.Task[string] {
			return task.AndThen(Step(c, str, "b", task.Succeed(a)), func(b string) task.Task[string] {
				return Step(c, str, "c", task.Succeed(b))
			})
		})
	})
	for _, driver := range dbtest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			ctx := context.Background()
			d := dbtest.Open(b, driver)
			engines := map[string]*Engine{
				"plain":     New(d, Options{WorkerID: "plain"}),
				"encrypted": New(d, Options{WorkerID: "sealed", Keys: testKey("k1", 1)}),
			}
			if err := engines["plain"].Setup(ctx); err != nil {
				b.Fatal(err)
			}
			best := map[string]float64{}
			for round := range rounds * b.N {
				for _, name := range []string{"plain", "encrypted"} {
					e := engines[name]
					for i := range runs {
						if err := Start(ctx, e, w, fmt.Sprintf("%s-%d-%d", name, round, i), payload); err != nil {
							b.Fatal(err)
						}
					}
					began := time.Now()
					for {
						worked, err := e.PollWith(ctx, []Workflow{w.Erase()}, PollOptions{MaxRuns: 8})
						if err != nil {
							b.Fatal(err)
						}
						if !worked {
							break
						}
					}
					best[name] = slices.Max([]float64{best[name], runs / time.Since(began).Seconds()})
				}
			}
			ratio := best["encrypted"] / best["plain"]
			b.ReportMetric(best["plain"], "plain-runs/s")
			b.ReportMetric(best["encrypted"], "encrypted-runs/s")
			b.ReportMetric(ratio, "ratio")
			b.Logf("%s: %.0f runs/s plain, %.0f runs/s encrypted: %.1f%% of the plain throughput", driver, best["plain"], best["encrypted"], 100*ratio)
		})
	}
}
