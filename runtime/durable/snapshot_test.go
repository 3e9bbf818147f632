package durable

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

func TestSnapshotWriteIfNewer(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		s := NewSnapshotStore(New(d, Options{}))
		steps := []struct {
			seq   int64
			data  string
			wrote bool
		}{{5, `"five"`, true}, {3, `"three"`, false}, {5, `"five again"`, false}, {6, `"six"`, true}}
		for _, st := range steps {
			wrote, err := s.Save(ctx, "m", st.seq, st.data)
			if err != nil || wrote != st.wrote {
				t.Fatalf("save seq %d: wrote=%v err=%v, want wrote=%v", st.seq, wrote, err, st.wrote)
			}
		}
		seq, data, found, err := s.Load(ctx, "m")
		if err != nil || !found || seq != 6 || data != `"six"` {
			t.Fatalf("load: seq=%d data=%q found=%v err=%v", seq, data, found, err)
		}
	})
}

func TestSnapshotSaveNextFromManyWriters(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		s := NewSnapshotStore(New(d, Options{}))
		const writers = 8
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- SaveSnapshotAuto(ctx, s, "shared", codec.Int, int64(i))
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		seq, _, _, err := s.Load(ctx, "shared")
		if err != nil || seq != writers {
			t.Fatalf("after %d saves the sequence is %d (err %v); every save must land", writers, seq, err)
		}
	})
}

func TestSnapshotBadInput(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	ctx := context.Background()
	s := NewSnapshotStore(New(d, Options{}))
	if _, err := s.Save(ctx, "", 1, "1"); err == nil || !strings.Contains(err.Error(), "snapshot id must not be empty") {
		t.Fatalf("empty id: %v", err)
	}
	for _, seq := range []int64{0, -3} {
		want := fmt.Sprintf(`InvalidInput: durable: snapshot "m": the sequence number %d is not 1 or more; hint: `, seq)
		if _, err := s.Save(ctx, "m", seq, "1"); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("sequence %d: %v, want %s...", seq, err, want)
		}
	}
	if _, err := s.Save(ctx, "m", 1, "{not json"); err == nil || !strings.Contains(err.Error(), `snapshot "m"`) {
		t.Fatalf("invalid JSON: %v", err)
	}
	if err := SaveSnapshotAuto(ctx, s, "m", codec.Int, 41); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadSnapshot(ctx, s, "m", codec.String)
	if err == nil || err.Error() != `Decode: durable: snapshot "m" does not decode: $: expected a string, found 41; hint: the model's codec changed since it was saved` {
		t.Fatalf("wrong codec: %v", err)
	}
}

// SaveSnapshot (Sky's Durable.saveSnapshot) encodes, writes only a newer
// sequence and reports whether it wrote.
func TestSaveSnapshotWriteIfNewer(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		s := NewSnapshotStore(New(d, Options{}))
		for _, st := range []struct {
			seq, v int64
			wrote  bool
		}{{5, 50, true}, {3, 30, false}, {5, 55, false}, {6, 60, true}} {
			wrote, err := SaveSnapshot(ctx, s, "m", st.seq, codec.Int, st.v)
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

// SaveSnapshotAuto never overwrites a stored snapshot that no longer
// decodes with its codec; an explicit newer sequence does replace it.
func TestSnapshotAutoKeepsUndecodable(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		s := NewSnapshotStore(New(d, Options{}))
		if _, err := SaveSnapshot(ctx, s, "m", 3, codec.String, "not a number"); err != nil {
			t.Fatal(err)
		}
		err := SaveSnapshotAuto(ctx, s, "m", codec.Int, 7)
		if err == nil || !strings.HasPrefix(err.Error(), `Decode: durable: snapshot "m" does not decode with this codec, so it is kept, not overwritten: $: expected an integer`) {
			t.Fatalf("auto save over an undecodable snapshot: %v", err)
		}
		seq, data, _, err := s.Load(ctx, "m")
		if err != nil || seq != 3 || data != `"not a number"` {
			t.Fatalf("stored: seq=%d data=%s err=%v, want the undecodable one kept", seq, data, err)
		}
		if wrote, err := SaveSnapshot(ctx, s, "m", 4, codec.Int, 8); err != nil || !wrote {
			t.Fatalf("explicit newer sequence: wrote=%v err=%v", wrote, err)
		}
		if err := SaveSnapshotAuto(ctx, s, "m", codec.Int, 9); err != nil {
			t.Fatal(err)
		}
		if v, _, err := LoadSnapshot(ctx, s, "m", codec.Int); err != nil || v != 9 {
			t.Fatalf("after the replace: %d %v", v, err)
		}
	})
}

// SaveSnapshotAutoInOrder lands the saves of one process in the order their
// tickets were taken (the order of an App's updates), whatever order the
// commands that run them finish in.
func TestSnapshotAutoInOrderKeepsTheNewestAsked(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		s := NewSnapshotStore(New(d, Options{}))
		first, second, third := s.Ticket(), s.Ticket(), s.Ticket()
		steps := []struct {
			ticket, v, want int64
		}{{second, 2, 2}, {first, 1, 2}, {third, 3, 3}}
		for _, st := range steps {
			if err := SaveSnapshotAutoInOrder(ctx, s, "burst", st.ticket, codec.Int, st.v); err != nil {
				t.Fatal(err)
			}
			v, _, err := LoadSnapshot(ctx, s, "burst", codec.Int)
			if err != nil || v != st.want {
				t.Fatalf("after the save of ticket %d (%d): stored %d (err %v), want %d", st.ticket, st.v, v, err, st.want)
			}
		}
		// Another id keeps its own order.
		if err := SaveSnapshotAutoInOrder(ctx, s, "other", first, codec.Int, 7); err != nil {
			t.Fatal(err)
		}
		if v, _, err := LoadSnapshot(ctx, s, "other", codec.Int); err != nil || v != 7 {
			t.Fatalf("other id: %d, %v; want 7", v, err)
		}
	})
}
