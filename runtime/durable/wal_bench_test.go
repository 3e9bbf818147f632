package durable

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		fmt.Printf("  by b-tree: %s\n", walPagesByTree(ctx, b, d, path+"-wal", before, pageSize))
		if _, err := d.ExecRaw(ctx, "PRAGMA wal_autocheckpoint = 1000"); err != nil {
			b.Fatal(err)
		}
	}
}

// walPagesByTree says which tables and indexes the frames of the log from
// offset on belong to, in pages per run, most first: each frame's header
// names its page (the first 4 bytes, big-endian), and SQLite's dbstat
// table names the b-tree each page of the database is in.
func walPagesByTree(ctx context.Context, b *testing.B, d *db.DB, wal string, offset, pageSize int64) string {
	tree := map[int64]string{}
	rows, err := d.Query(ctx, "SELECT name, pageno FROM dbstat")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var page int64
		if err := rows.Scan(&name, &page); err != nil {
			b.Fatal(err)
		}
		tree[page] = name
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	log, err := os.ReadFile(wal)
	if err != nil {
		b.Fatal(err)
	}
	pages := map[string]int{}
	// The log starts with a 32-byte header (a truncated log has none yet).
	for at := max(offset, 32); at+24+pageSize <= int64(len(log)); at += 24 + pageSize {
		name := tree[int64(binary.BigEndian.Uint32(log[at:]))]
		if name == "" {
			name = "(free)"
		}
		pages[name]++
	}
	names := slices.SortedFunc(maps.Keys(pages), func(x, y string) int {
		return cmp.Or(cmp.Compare(pages[y], pages[x]), cmp.Compare(x, y))
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %.1f", name, float64(pages[name])/walPageRuns)
	}
	return strings.Join(parts, ", ")
}
