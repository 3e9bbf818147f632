package durable

import (
	"context"
	"testing"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// SaveSnapshotSeq (Sky's Durable.saveSnapshotSeq) encodes, writes only a
// newer sequence and reports whether it wrote.
func TestSaveSnapshotSeq(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		s := NewSnapshotStore(New(d, Options{}))
		for _, st := range []struct {
			seq, v int64
			wrote  bool
		}{{5, 50, true}, {3, 30, false}, {5, 55, false}, {6, 60, true}} {
			wrote, err := SaveSnapshotSeq(ctx, s, "m", st.seq, codec.Int, st.v)
			if err != nil || wrote != st.wrote {
				t.Fatalf("seq %d: wrote=%v err=%v, want wrote=%v", st.seq, wrote, err, st.wrote)
			}
		}
		v, found, err := LoadSnapshot(ctx, s, "m", codec.Int)
		if err != nil || !found || v != 60 {
			t.Fatalf("load: %d found=%v err=%v, want 60", v, found, err)
		}
	})
}
