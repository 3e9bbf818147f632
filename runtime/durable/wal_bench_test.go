package durable

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/task"
)

// walPageRuns is how many runs BenchmarkWALPages counts, after as many
// again to warm the tables up.
const walPageRuns = 1000

// BenchmarkWALPages prints how many pages a 3-step workflow run by its
// caller (RunNow, one at a time) writes to SQLite's write-ahead log: every
// commit appends each page it changed, so this is most of what a run costs
// SQLite alone (docs/benchmarks.md, "SQLite: the search index filled in
// the background", "SQLite: a step writes the journal only"). The log is
// not checkpointed while it counts, so its size is every page written.
//
//	go test -run '^$' -bench WALPages -benchtime 1x ./runtime/durable
func BenchmarkWALPages(b *testing.B) {
	b.Run("system clock", func(b *testing.B) { walPages(b, "system clock", nil) })
	// A clock that moves a millisecond at each reading, as steps that take
	// time do: every timestamp a run writes differs from the one before,
	// so no row is rewritten byte for byte (SQLite then skips the page).
	var ticks atomic.Int64
	start := time.Now()
	moving := func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Millisecond) }
	b.Run("moving clock", func(b *testing.B) { walPages(b, "moving clock", moving) })
}

func walPages(b *testing.B, label string, clock func() time.Time) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "wal.db")
	d, err := db.Open(ctx, "sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	e := New(d, Options{WorkerID: "bench", Clock: clock})
	if err := e.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	step := func(c *Ctx, id string) task.Task[string] { return Step(c, str, id, task.Succeed(id)) }
	three := Register("three", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(step(c, "a"), func(string) task.Task[string] {
			return task.AndThen(step(c, "b"), func(string) task.Task[string] { return step(c, "c") })
		})
	})
	run := func(prefix string) {
		for i := range walPageRuns {
			if _, err := RunNow(ctx, e, three, fmt.Sprintf("%s-%d", prefix, i), `{"order":42}`); err != nil {
				b.Fatal(err)
			}
		}
	}
	walSize := func() int64 {
		st, err := os.Stat(path + "-wal")
		if err != nil {
			b.Fatal(err)
		}
		return st.Size()
	}
	var pageSize int64
	if err := d.QueryRow(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for n := range b.N {
		run(fmt.Sprint("warm", n))
		if _, err := d.ExecRaw(ctx, "PRAGMA wal_autocheckpoint = 0; PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			b.Fatal(err)
		}
		before := walSize()
		run(fmt.Sprint("run", n))
		// A frame is a 24-byte header and a page.
		frames := float64(walSize()-before) / float64(24+pageSize)
		fmt.Printf("sqlite WAL, %s: %.1f pages per 3-step RunNow (%d runs)\n", label, frames/walPageRuns, walPageRuns)
		if _, err := d.ExecRaw(ctx, "PRAGMA wal_autocheckpoint = 1000"); err != nil {
			b.Fatal(err)
		}
	}
}
