package postgres

import (
	"context"

	"skydurable/runtime/durable/store"
)

// Re-encryption (store.Resealer): store.NewResealStatements with this
// dialect's list test.
var pgResealSQL = store.NewResealStatements(func(column string) string { return column + " = ANY (" + pgList + ")" })

func (s *Store) RunsAfter(ctx context.Context, after string, limit int) ([]string, error) {
	return pgResealSQL.ListRunsAfter(ctx, s.d, s.hook, after, limit)
}

func (s *Store) Payloads(ctx context.Context, ids []string) ([]store.Payload, error) {
	return pgResealSQL.ReadPayloads(ctx, s.d, s.hook, store.JSONList(ids))
}

func (s *Store) SwapPayloads(ctx context.Context, swaps []store.Swap) (int64, error) {
	return pgResealSQL.WriteSwaps(ctx, s.d, s.hook, swaps)
}
