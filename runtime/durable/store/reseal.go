package store

import (
	"context"
	"fmt"

	"skydurable/runtime/db"
)

// Resealer reads and rewrites payloads in place, run by run: what the
// engine's re-encryption (`sky durable rekey`, Engine.Rekey) and a fork of
// an encrypted run (Engine.Fork) need. Each dialect supplies its statements
// as a ResealStatements; the procedures are written once, here.
type Resealer interface {
	// RunsAfter lists up to limit run ids greater than after, in id order,
	// on the primary key.
	RunsAfter(ctx context.Context, after string, limit int) ([]string, error)
	// Payloads reads every payload of the runs ids (their input and
	// output, journal results, signal payloads and event values) in one
	// statement on the primary keys.
	Payloads(ctx context.Context, ids []string) ([]Payload, error)
	// SwapPayloads writes each swap's New where its payload still is Old
	// (a payload changed since it was read is left as it is), in one
	// transaction; it reports how many it changed. A swap's Place may also
	// be PlaceSchedule (RunID: the schedule id), for ListSchedules' inputs.
	SwapPayloads(ctx context.Context, swaps []Swap) (int64, error)
}

// PayloadPlace says which column of which table a Payload is.
type PayloadPlace string

// The places a payload is stored.
const (
	PlaceInput    PayloadPlace = "input"    // _sky_durable_runs.input
	PlaceOutput   PayloadPlace = "output"   // _sky_durable_runs.output
	PlaceJournal  PayloadPlace = "journal"  // _sky_durable_journal.result (Key: the step id)
	PlaceSignal   PayloadPlace = "signal"   // _sky_durable_signals.payload (Key: the signal name)
	PlaceEvent    PayloadPlace = "event"    // _sky_durable_events.value (Key: the event key)
	PlaceSchedule PayloadPlace = "schedule" // _sky_durable_schedules.input (RunID: the schedule id)
)

// Payload is one stored payload.
type Payload struct {
	Place PayloadPlace
	RunID string
	// Key is the step id, signal name or event key ("" for input, output
	// and a schedule's input).
	Key  string
	Text string
	// ForkedFrom is the run's forked_from (only on its input and output;
	// "" when it was not forked).
	ForkedFrom string
}

// Swap replaces Old (the payload's Text as read) with New.
type Swap struct {
	Payload
	New string
}

// ResealStatements are a dialect's statements for Resealer.
type ResealStatements struct {
	// RunsAfter takes (after, limit) and gives id.
	RunsAfter string
	// Payloads takes the JSON array of the run ids ListArgs times and
	// gives place, run id, key, text, forked_from.
	Payloads string
	ListArgs int
	// Swap, by place, takes (new, run id, key, old), without the key for
	// PlaceInput, PlaceOutput and PlaceSchedule.
	Swap map[PayloadPlace]string
}

// NewResealStatements builds the statements, the same on every dialect but
// for how a column is tested against a list argument: in(column) is the
// dialect's "column is in the JSON array ?" (PostgreSQL: = ANY of the array
// the JSON holds; SQLite: IN json_each). Each reads and writes on primary
// keys; a swap is guarded by the text it replaces.
func NewResealStatements(in func(column string) string) ResealStatements {
	return ResealStatements{
		RunsAfter: `SELECT id FROM _sky_durable_runs WHERE id > ? ORDER BY id LIMIT ?`,
		Payloads: `
SELECT 'input', r.id, '', r.input, COALESCE(r.forked_from, '') FROM _sky_durable_runs r WHERE ` + in("r.id") + `
UNION ALL
SELECT 'output', r.id, '', r.output, COALESCE(r.forked_from, '') FROM _sky_durable_runs r WHERE ` + in("r.id") + ` AND r.output IS NOT NULL
UNION ALL
SELECT 'journal', j.run_id, j.step_id, j.result, '' FROM _sky_durable_journal j WHERE ` + in("j.run_id") + `
UNION ALL
SELECT 'signal', s.run_id, s.name, s.payload, '' FROM _sky_durable_signals s WHERE ` + in("s.run_id") + `
UNION ALL
SELECT 'event', e.run_id, e.key, e.value, '' FROM _sky_durable_events e WHERE ` + in("e.run_id"),
		ListArgs: 5,
		Swap: map[PayloadPlace]string{
			PlaceInput:    `UPDATE _sky_durable_runs SET input = ? WHERE id = ? AND input = ?`,
			PlaceOutput:   `UPDATE _sky_durable_runs SET output = ? WHERE id = ? AND output = ?`,
			PlaceJournal:  `UPDATE _sky_durable_journal SET result = ? WHERE run_id = ? AND step_id = ? AND result = ?`,
			PlaceSignal:   `UPDATE _sky_durable_signals SET payload = ? WHERE run_id = ? AND name = ? AND payload = ?`,
			PlaceEvent:    `UPDATE _sky_durable_events SET value = ? WHERE run_id = ? AND key = ? AND value = ?`,
			PlaceSchedule: `UPDATE _sky_durable_schedules SET input = ? WHERE id = ? AND input = ?`,
		},
	}
}

// ListRunsAfter is Resealer.RunsAfter over q.
func (rs ResealStatements) ListRunsAfter(ctx context.Context, q *db.DB, hook StatementHook, after string, limit int) ([]string, error) {
	hook("reseal", rs.RunsAfter)
	rows, err := q.Query(ctx, rs.RunsAfter, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// ReadPayloads is Resealer.Payloads over q; list is the JSON array of ids.
func (rs ResealStatements) ReadPayloads(ctx context.Context, q *db.DB, hook StatementHook, list string) ([]Payload, error) {
	args := make([]any, rs.ListArgs)
	for i := range args {
		args[i] = list
	}
	hook("reseal", rs.Payloads)
	rows, err := q.Query(ctx, rs.Payloads, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Payload
	for rows.Next() {
		var p Payload
		var place string
		if err := rows.Scan(&place, &p.RunID, &p.Key, &p.Text, &p.ForkedFrom); err != nil {
			return nil, err
		}
		p.Place = PayloadPlace(place)
		out = append(out, p)
	}
	return out, rows.Err()
}

// WriteSwaps is Resealer.SwapPayloads over d, in one transaction.
func (rs ResealStatements) WriteSwaps(ctx context.Context, d *db.DB, hook StatementHook, swaps []Swap) (int64, error) {
	var n int64
	err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		n = 0
		for _, s := range swaps {
			sql, ok := rs.Swap[s.Place]
			if !ok {
				return fmt.Errorf("store: no payload place %q; hint: one of input, output, journal, signal, event, schedule", s.Place)
			}
			args := []any{s.New, s.RunID, s.Key, s.Text}
			if s.Place == PlaceInput || s.Place == PlaceOutput || s.Place == PlaceSchedule {
				args = []any{s.New, s.RunID, s.Text}
			}
			hook("reseal", sql)
			changed, err := tx.Exec(ctx, sql, args...)
			if err != nil {
				return err
			}
			n += changed
		}
		return nil
	})
	return n, err
}
