package main

import (
	"context"
	"fmt"
	"io"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// durableRelease is `sky durable release ID`: free a running run whose
// worker is known dead (its process was killed, its machine is gone), so a
// peer resumes it at once instead of when its lease ends. A run that is
// not running is refused (exit 1).
func durableRelease(ctx context.Context, e *durable.Engine, _ *durableFlags, a []string, out io.Writer) error {
	if err := e.Release(ctx, a[0]); err != nil {
		return err
	}
	fmt.Fprintf(out, "run %s released: it is due at once; a worker resumes it from its journal (the dead worker's attempt counts)\n", view.Safe(a[0]))
	return nil
}
