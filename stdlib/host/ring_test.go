package host

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"skydurable/runtime/value"
)

// chunkOf reads a Chunk record's fields.
func chunkOf(t *testing.T, v value.Value) (data string, from, next int64, dropped, eof bool) {
	t.Helper()
	r := v.(*value.Record)
	get := func(n string) value.Value { x, _ := r.Get(n); return x }
	return get("data").(string), get("from").(int64), get("next").(int64), get("dropped").(bool), get("eof").(bool)
}

// pipeRing is a ring of size bytes filled from a pipe; write to w, close it
// to end the stream.
func pipeRing(t *testing.T, size int) (*ring, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rg := newRing(size)
	go rg.fill(r)
	t.Cleanup(func() { w.Close() })
	return rg, w
}

// TestRingDropsAndNumbers: a ring of 4 bytes keeps the last 4 of 10; a
// read from 0 says it dropped 6 and gives bytes 6..9, then the end; a
// negative offset reads from the oldest kept byte; past the end is refused.
func TestRingDropsAndNumbers(t *testing.T) {
	rg, w := pipeRing(t, 4)
	if _, err := w.WriteString("abcdefghij"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ctx := context.Background()
	v, err := rg.read(ctx, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, from, next, dropped, _ := chunkOf(t, v)
	if data != "ghij" || from != 6 || next != 10 || !dropped {
		t.Errorf("read 0: got %q from %d next %d dropped %v, want \"ghij\" from 6 next 10 dropped true", data, from, next, dropped)
	}
	v, err = rg.read(ctx, next, nil)
	if err != nil {
		t.Fatal(err)
	}
	if data, _, next2, _, eof := chunkOf(t, v); data != "" || next2 != 10 || !eof {
		t.Errorf("read 10: got %q next %d eof %v, want the end", data, next2, eof)
	}
	v, err = rg.read(ctx, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if data, from, _, dropped, eof := chunkOf(t, v); data != "ghij" || from != 6 || dropped || !eof {
		t.Errorf("read -1: got %q from %d dropped %v eof %v, want the oldest kept bytes, not dropped", data, from, dropped, eof)
	}
	if _, err := rg.read(ctx, 11, nil); !errors.Is(err, errPastEnd) {
		t.Errorf("read 11: got %v, want errPastEnd", err)
	}
}

// TestRingWaitsForBytes: a read of a quiet stream gives an empty chunk when
// its timeout fires, and otherwise waits until a byte arrives.
func TestRingWaitsForBytes(t *testing.T) {
	rg, w := pipeRing(t, 16)
	fired := make(chan time.Time, 1)
	fired <- time.Time{}
	v, err := rg.read(context.Background(), 0, fired)
	if err != nil {
		t.Fatal(err)
	}
	if data, _, next, _, eof := chunkOf(t, v); data != "" || next != 0 || eof {
		t.Errorf("timed out read: got %q next %d eof %v, want an empty chunk at 0", data, next, eof)
	}
	got := make(chan value.Value, 1)
	go func() {
		v, _ := rg.read(context.Background(), 0, nil)
		got <- v
	}()
	if _, err := w.WriteString("x"); err != nil {
		t.Fatal(err)
	}
	if data, from, next, _, _ := chunkOf(t, <-got); data != "x" || from != 0 || next != 1 {
		t.Errorf("waiting read: got %q from %d next %d, want \"x\" from 0 next 1", data, from, next)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rg.read(ctx, 1, nil); err == nil {
		t.Error("read with a cancelled context: got no error")
	}
}
