package sqlite

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// BenchmarkGroupCommit is the cost of a write on SQLite alone and in
// batches of 4 and 8 sharing one transaction (writeBatch, as group commit
// runs them), ns/op per write: a journal write (an autocommitted INSERT
// alone) and a completion with its last step (a transaction of two
// statements alone).
func BenchmarkGroupCommit(b *testing.B) {
	for _, kind := range []string{"append", "complete"} {
		for _, size := range []int{1, 4, 8} {
			b.Run(kind+"/batch "+strconv.Itoa(size), func(b *testing.B) {
				ctx := context.Background()
				// A file of its own, as a program opens it (WAL, synchronous=NORMAL).
				d, err := db.Open(ctx, "sqlite", filepath.Join(b.TempDir(), "bench.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer d.Close()
				s := New(d, nil)
				if err := s.Setup(ctx); err != nil {
					b.Fatal(err)
				}
				now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				runs := b.N + size
				for i := range runs {
					id := "r" + strconv.Itoa(i)
					if _, _, err := s.InsertRun(ctx, store.NewRun{ID: id, Workflow: "w", Version: 1, Input: `""`}, now); err != nil {
						b.Fatal(err)
					}
					if _, ok, err := s.ClaimRun(ctx, []string{"w"}, now, time.Hour, "t"+id, "A"); !ok || err != nil {
						b.Fatal(ok, err)
					}
				}
				last := store.JournalEntry{Seq: 1, StepID: "s", Kind: store.KindStep, Result: `"x"`}
				b.ResetTimer()
				for n := 0; n < b.N; n += size {
					batch := make([]write, size)
					for j := range batch {
						id := "r" + strconv.Itoa(n+j)
						f := store.Fence{RunID: id, Token: "t" + id}
						batch[j] = write{run: func(ctx context.Context) error {
							if kind == "append" {
								return s.AppendEntry(ctx, s.d, f, last, now)
							}
							return s.complete(ctx, f, &last, `"x"`, now)
						}}
					}
					for _, err := range s.writeBatch(ctx, batch) {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
