package durable

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
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
// ratio, and the least CPU time this process spent per run in a round
// (getrusage: on a shared machine steadier than the wall clock; for SQLite
// it includes the database's own work) (docs/benchmarks.md, "Encryption at
// rest").
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
			cpu := func() time.Duration {
				var ru syscall.Rusage
				if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
					b.Fatal(err)
				}
				return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			best := map[string]float64{}
			leastCPU := map[string]time.Duration{}
			for round := range rounds * b.N {
				for _, name := range []string{"plain", "encrypted"} {
					e := engines[name]
					for i := range runs {
						if err := Start(ctx, e, w, fmt.Sprintf("%s-%d-%d", name, round, i), payload); err != nil {
							b.Fatal(err)
						}
					}
					began, beganCPU := time.Now(), cpu()
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
					if used := (cpu() - beganCPU) / runs; leastCPU[name] == 0 || used < leastCPU[name] {
						leastCPU[name] = used
					}
				}
			}
			ratio := best["encrypted"] / best["plain"]
			b.ReportMetric(best["plain"], "plain-runs/s")
			b.ReportMetric(best["encrypted"], "encrypted-runs/s")
			b.ReportMetric(ratio, "ratio")
			b.ReportMetric(float64(leastCPU["plain"].Microseconds()), "plain-cpu-µs/run")
			b.ReportMetric(float64(leastCPU["encrypted"].Microseconds()), "encrypted-cpu-µs/run")
			b.Logf("%s: %.0f runs/s plain, %.0f runs/s encrypted: %.1f%% of the plain throughput; process CPU per run %v plain, %v encrypted",
				driver, best["plain"], best["encrypted"], 100*ratio, leastCPU["plain"], leastCPU["encrypted"])
		})
	}
}
