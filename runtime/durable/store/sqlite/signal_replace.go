package sqlite

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// sqliteReplaceSignal overwrites an undelivered signal's payload (the
// operator's `sky durable signal --replace`); a delivered one is left as it
// is, and so is the mailbox of a finished run, as sqlitePutSignal leaves it
// (whose parameters it takes).
const sqliteReplaceSignal = `
INSERT INTO _sky_durable_signals (run_id, name, payload, trace_context, delivered, created_at)
SELECT ?, ?, ?, NULLIF(?, ''), FALSE, ?
 WHERE NOT EXISTS (SELECT 1 FROM _sky_durable_runs WHERE id = ? AND status IN (` + store.SQLTerminal + `))
ON CONFLICT (run_id, name) DO UPDATE SET payload = excluded.payload, trace_context = excluded.trace_context,
  created_at = excluded.created_at
 WHERE _sky_durable_signals.delivered = FALSE`

func (s *Store) ReplaceSignal(ctx context.Context, runID, name, payload string, now time.Time) (bool, error) {
	return s.putSignal(ctx, sqliteReplaceSignal, store.EventSignalReplaced, runID, name, payload, "", now)
}
