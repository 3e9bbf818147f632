package host

import (
	"context"
	"testing"

	"skydurable/runtime/value"
)

// TestWaitThenReadSeesTheEnd: once wait has answered, the child's own
// output has ended, so a read gives all of it and eof (without the streams'
// settling, wait could answer before the reader saw the end: eof False).
func TestWaitThenReadSeesTheEnd(t *testing.T) {
	ctx := context.Background()
	for i := range 200 {
		spec := value.NewRecord(map[string]value.Value{
			"program": "printf", "args": value.FromSlice([]value.Value{"abcdefghij"}),
			"bufferSize": int64(4), "cwd": "", "env": value.FromSlice(nil), "clearEnv": false,
		})
		p, err := spawn(spec)
		if err != nil {
			t.Fatal(err)
		}
		c := p.(value.Opaque).V.(*child)
		<-c.exited
		v, err := c.out[0].read(ctx, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if data, from, _, dropped, eof := chunkOf(t, v); data != "ghij" || from != 6 || !dropped || !eof {
			t.Fatalf("spawn %d: after wait, read 0 gave %q from %d dropped %v eof %v; want \"ghij\" from 6 dropped true eof true", i, data, from, dropped, eof)
		}
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
	}
}
