package worker_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

var figures = flag.Bool("figures", false, "measure and print signal-to-resume latency and worker throughput (slow)")

// TestFigures prints the app figures (go test ./examples/worker -run
// Figures -figures -v): signal-to-resume latency of an idle examples/worker
// (1 s tick) with NOTIFY hints on and off, and the throughput of three
// workers draining 10,000 one-step runs.
func TestFigures(t *testing.T) {
	if !*figures {
		t.Skip("a measurement, not a check: run with -figures")
	}
	t.Run("latency", func(t *testing.T) {
		on := signalToResume(t, "on", 100)
		off := signalToResume(t, "off", 20)
		fmt.Printf("signal-to-resume, idle worker, 1 s tick: NOTIFY on  p50 %v p99 %v (%d runs)\n", pct(on, 50), pct(on, 99), len(on))
		fmt.Printf("signal-to-resume, idle worker, 1 s tick: NOTIFY off p50 %v p99 %v (%d runs)\n", pct(off, 50), pct(off, 99), len(off))
	})
	t.Run("throughput", func(t *testing.T) {
		const runs = 10000
		url := dbtest.URL(t, "throughput")
		env := []string{"DATABASE_URL=" + url}
		d := openURL(t, url)
		starter := startSky(t, fmt.Sprintf("greet %d t\n", runs), env, "src/Start.sky")
		starter.wait(t, 5*time.Minute)
		begin := time.Now()
		ws := startWorkers(t, 3, env)
		awaitCount(t, d, `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`, runs, 10*time.Minute)
		wall := time.Since(begin)
		stopWorkers(t, ws)
		var span float64
		if err := d.QueryRow(context.Background(),
			`SELECT EXTRACT(EPOCH FROM max(r.updated_at) - min(j.created_at))::float8 FROM _sky_durable_runs r, _sky_durable_journal j`).Scan(&span); err != nil {
			t.Fatal(err)
		}
		var shares []string
		for _, w := range ws {
			shares = append(shares, fmt.Sprint(advanced(t, w)))
		}
		fmt.Printf("throughput, 3 TEA workers, %d one-step runs on PostgreSQL: %.0f runs/s from first step to last done (%.2fs), %.0f runs/s wall incl. process start (%v); shares %s\n",
			runs, float64(runs)/span, span, float64(runs)/wall.Seconds(), wall.Round(time.Millisecond), strings.Join(shares, "/"))
	})
}

// signalToResume starts n approve runs, lets one idle worker park them, then
// signals them one at a time (each after the previous resumed) and returns
// the delay from the signal's commit to the journal write of the step right
// after awaitSignal, both read from the database clock.
func signalToResume(t *testing.T, notify string, n int) []time.Duration {
	t.Helper()
	url := dbtest.URL(t, "latency")
	env := []string{"DATABASE_URL=" + url, "SKY_DURABLE_NOTIFY=" + notify}
	d := openURL(t, url)
	ws := startWorkers(t, 1, env)
	var lines strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&lines, "approve l-%d\n", i)
	}
	startSky(t, lines.String(), env, "src/Start.sky").wait(t, time.Minute)
	awaitCount(t, d, `SELECT count(*) FROM _sky_durable_runs WHERE status = 'waiting' AND waiting_signal = 'approved'`, int64(n), time.Minute)
	e := durable.New(d, durable.Options{})
	ctx := context.Background()
	// Without hints a run resumes on the worker's next tick; a signal sent
	// right after the previous resume would always land just after a tick.
	// A random pause spreads the signals over the tick's phase.
	phase := rand.New(rand.NewPCG(1, 2))
	for i := 1; i <= n; i++ {
		if notify == "off" {
			time.Sleep(time.Duration(phase.Int64N(int64(time.Second))))
		}
		id := fmt.Sprintf("l-%d", i)
		if err := e.Signal(ctx, id, "approved", `"bench"`); err != nil {
			t.Fatal(err)
		}
		awaitCount(t, d, fmt.Sprintf(`SELECT count(*) FROM _sky_durable_runs WHERE id = '%s' AND status = 'done'`, id), 1, 10*time.Second)
	}
	stopWorkers(t, ws)
	rows, err := d.Query(ctx, `SELECT EXTRACT(EPOCH FROM j.created_at - s.created_at)::float8
		FROM _sky_durable_signals s JOIN _sky_durable_journal j ON j.run_id = s.run_id AND j.step_id = 'resumed'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var s float64
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, time.Duration(s*float64(time.Second)))
	}
	if len(out) != n {
		t.Fatalf("%d latencies for %d runs", len(out), n)
	}
	return out
}

// pct is the p-th percentile (nearest rank), rounded for printing.
func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return s[i-1].Round(100 * time.Microsecond)
}
