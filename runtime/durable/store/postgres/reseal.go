package postgres

import (
	"context"

	"skydurable/runtime/durable/store"
)

// Re-encryption (store.Resealer): runs in id order on the primary key, their
// payloads in one statement on the primary keys, swaps guarded by the text
// they replace.

const pgRunsAfter = `SELECT id FROM _sky_durable_runs WHERE id > ? ORDER BY id LIMIT ?`

const pgPayloads = `
SELECT 'input', r.id, '', r.input, COALESCE(r.forked_from, '') FROM _sky_durable_runs r WHERE r.id = ANY (` + pgList + `)
UNION ALL
SELECT 'output', r.id, '', r.output, COALESCE(r.forked_from, '') FROM _sky_durable_runs r WHERE r.id = ANY (` + pgList + `) AND r.output IS NOT NULL
UNION ALL
SELECT 'journal', j.run_id, j.step_id, j.result, '' FROM _sky_durable_journal j WHERE j.run_id = ANY (` + pgList + `)
UNION ALL
SELECT 'signal', s.run_id, s.name, s.payload, '' FROM _sky_durable_signals s WHERE s.run_id = ANY (` + pgList + `)
UNION ALL
SELECT 'event', e.run_id, e.key, e.value, '' FROM _sky_durable_events e WHERE e.run_id = ANY (` + pgList + `)`

const (
	pgSwapInput    = `UPDATE _sky_durable_runs SET input = ? WHERE id = ? AND input = ?`
	pgSwapOutput   = `UPDATE _sky_durable_runs SET output = ? WHERE id = ? AND output = ?`
	pgSwapJournal  = `UPDATE _sky_durable_journal SET result = ? WHERE run_id = ? AND step_id = ? AND result = ?`
	pgSwapSignal   = `UPDATE _sky_durable_signals SET payload = ? WHERE run_id = ? AND name = ? AND payload = ?`
	pgSwapEvent    = `UPDATE _sky_durable_events SET value = ? WHERE run_id = ? AND key = ? AND value = ?`
	pgSwapSchedule = `UPDATE _sky_durable_schedules SET input = ? WHERE id = ? AND input = ?`
)

var resealSQL = store.ResealStatements{RunsAfter: pgRunsAfter, Payloads: pgPayloads, ListArgs: 5, Swap: map[store.PayloadPlace]string{
	store.PlaceInput: pgSwapInput, store.PlaceOutput: pgSwapOutput, store.PlaceJournal: pgSwapJournal,
	store.PlaceSignal: pgSwapSignal, store.PlaceEvent: pgSwapEvent, store.PlaceSchedule: pgSwapSchedule,
}}

func (s *Store) RunsAfter(ctx context.Context, after string, limit int) ([]string, error) {
	return resealSQL.ListRunsAfter(ctx, s.d, s.hook, after, limit)
}

func (s *Store) Payloads(ctx context.Context, ids []string) ([]store.Payload, error) {
	return resealSQL.ReadPayloads(ctx, s.d, s.hook, store.JSONList(ids))
}

func (s *Store) SwapPayloads(ctx context.Context, swaps []store.Swap) (int64, error) {
	return resealSQL.WriteSwaps(ctx, s.d, s.hook, swaps)
}
