package durable

import (
	"context"

	"skydurable/runtime/durable/store"
)

// ReadRun reads one run without its journal (Describe reads both); an
// unknown id is a NotFound error naming it.
func (e *Engine) ReadRun(ctx context.Context, runID string) (Run, error) {
	r, err := e.store.ReadRun(ctx, runID)
	if err == store.ErrRunNotFound {
		return Run{}, runNotFound(runID)
	}
	return r, err
}
