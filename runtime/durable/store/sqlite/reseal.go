package sqlite

import (
	"context"

	"skydurable/runtime/durable/store"
)

// Re-encryption (store.Resealer): runs in id order on the primary key, their
// payloads in one statement on the primary keys, swaps guarded by the text
// they replace.

const sqliteRunsAfter = `SELECT id FROM _sky_durable_runs WHERE id > ? ORDER BY id LIMIT ?`

const sqlitePayloads = `
SELECT 'input', r.id, '', r.input, COALESCE(r.forked_from, '') FROM _sky_durable_runs r WHERE r.id IN ` + sqliteList + `
UNION ALL
SELECT 'output', r.id, '', r.output, COALESCE(r.forked_from, '') FROM _sky_durable_runs r WHERE r.id IN ` + sqliteList + ` AND r.output IS NOT NULL
UNION ALL
SELECT 'journal', j.run_id, j.step_id, j.result, '' FROM _sky_durable_journal j WHERE j.run_id IN ` + sqliteList + `
UNION ALL
SELECT 'signal', s.run_id, s.name, s.payload, '' FROM _sky_durable_signals s WHERE s.run_id IN ` + sqliteList + `
UNION ALL
SELECT 'event', e.run_id, e.key, e.value, '' FROM _sky_durable_events e WHERE e.run_id IN ` + sqliteList

const (
	sqliteSwapInput    = `UPDATE _sky_durable_runs SET input = ? WHERE id = ? AND input = ?`
	sqliteSwapOutput   = `UPDATE _sky_durable_runs SET output = ? WHERE id = ? AND output = ?`
	sqliteSwapJournal  = `UPDATE _sky_durable_journal SET result = ? WHERE run_id = ? AND step_id = ? AND result = ?`
	sqliteSwapSignal   = `UPDATE _sky_durable_signals SET payload = ? WHERE run_id = ? AND name = ? AND payload = ?`
	sqliteSwapEvent    = `UPDATE _sky_durable_events SET value = ? WHERE run_id = ? AND key = ? AND value = ?`
	sqliteSwapSchedule = `UPDATE _sky_durable_schedules SET input = ? WHERE id = ? AND input = ?`
)

var resealSQL = store.ResealStatements{RunsAfter: sqliteRunsAfter, Payloads: sqlitePayloads, ListArgs: 5, Swap: map[store.PayloadPlace]string{
	store.PlaceInput: sqliteSwapInput, store.PlaceOutput: sqliteSwapOutput, store.PlaceJournal: sqliteSwapJournal,
	store.PlaceSignal: sqliteSwapSignal, store.PlaceEvent: sqliteSwapEvent, store.PlaceSchedule: sqliteSwapSchedule,
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
