package db

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// genericPlanKey marks a context whose statements run on their generic plan.
type genericPlanKey struct{}

// GenericPlan returns ctx marked so that a statement made with it on
// PostgreSQL, outside a transaction, runs on the generic plan of its
// prepared statement: a set_config of plan_cache_mode to
// force_generic_plan, local to the statement's implicit transaction, goes
// in the same round trip just before it (one pipeline, one Sync, so one
// transaction, and the setting ends with it). PostgreSQL otherwise plans
// the first five executions of each prepared statement on each connection
// with their parameters (custom plans) before it compares them with the
// generic one; for statements that take milliseconds to plan, run by
// many pooled connections in several shapes (the durable store's batched
// claims), that warm-up was a tenth of the server's time in the peer
// benchmark's timed drain (docs/benchmarks.md, "Generic plans"). Use it
// only for statements whose generic plans are tested (the durable store's
// plan tests run every statement in both modes).
//
// No effect on SQLite, inside a transaction (the setting would last until
// its end, over the caller's own statements) or behind a transaction
// pooler (no prepared statements: each execution is planned anew).
func GenericPlan(ctx context.Context) context.Context {
	return context.WithValue(ctx, genericPlanKey{}, true)
}

func genericPlan(ctx context.Context) bool {
	on, _ := ctx.Value(genericPlanKey{}).(bool)
	return on
}

// GenericPlanSetting is the statement GenericPlan sends before the one it
// marks (a counter of the wire protocol tells it apart by its text).
// plan_cache_mode is PostgreSQL 12's, the version the durable store's
// statements need anyway (their CTEs say AS MATERIALIZED).
const GenericPlanSetting = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"

// sendGeneric sends the setting and the statement in one batch; the caller
// reads the statement's result from the batch and closes it.
func (b *postgresBackend) sendGeneric(ctx context.Context, st *statement, args []any) (pgx.BatchResults, error) {
	batch := &pgx.Batch{}
	batch.Queue(GenericPlanSetting)
	batch.Queue(st.text, args...)
	br := b.pool.SendBatch(ctx, batch)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return nil, err
	}
	return br, nil
}

// execGeneric is exec on the generic plan (GenericPlan).
func (b *postgresBackend) execGeneric(ctx context.Context, st *statement, args []any) (int64, error) {
	br, err := b.sendGeneric(ctx, st, args)
	if err != nil {
		return 0, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// queryGeneric is query on the generic plan (GenericPlan): the rows' Close
// ends the batch and returns its connection to the pool.
func (b *postgresBackend) queryGeneric(ctx context.Context, st *statement, args []any) (rawRows, error) {
	br, err := b.sendGeneric(ctx, st, args)
	if err != nil {
		return nil, err
	}
	rs, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return &batchRows{pgRows: newPgRows(rs), br: br}, nil
}

// batchRows are the rows of a batch's last statement: once they are read
// (or closed) the batch ends, and its end's error (the commit's) is theirs.
type batchRows struct {
	*pgRows
	br     pgx.BatchResults
	ended  bool
	endErr error
}

func (r *batchRows) end() {
	if !r.ended {
		r.ended = true
		r.pgRows.Close()
		r.endErr = r.br.Close()
	}
}

func (r *batchRows) Next() bool {
	if r.pgRows.Next() {
		return true
	}
	r.end()
	return false
}

func (r *batchRows) Err() error {
	if err := r.pgRows.Err(); err != nil {
		return err
	}
	return r.endErr
}

func (r *batchRows) Close() { r.end() }
