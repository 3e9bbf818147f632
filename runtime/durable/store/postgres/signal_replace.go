package postgres

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// pgReplaceSignal overwrites an undelivered signal's payload (the
// operator's `sky durable signal --replace`); a delivered one is left as it
// is, and so is the mailbox of a finished run, as pgPutSignal leaves it
// (whose parameters it takes; putSignal holds the run's row lock).
const pgReplaceSignal = pgClock + `
INSERT INTO _sky_durable_signals (run_id, name, payload, trace_context, delivered, created_at)
SELECT ?, ?, ?, NULLIF(CAST(? AS TEXT), ''), FALSE, clock.now FROM clock
 WHERE NOT EXISTS (SELECT 1 FROM _sky_durable_runs f WHERE f.id = ? AND f.status IN (` + store.SQLTerminal + `))
ON CONFLICT (run_id, name) DO UPDATE SET payload = EXCLUDED.payload, trace_context = EXCLUDED.trace_context,
  created_at = EXCLUDED.created_at
 WHERE _sky_durable_signals.delivered = FALSE`

func (s *Store) ReplaceSignal(ctx context.Context, runID, name, payload string, now time.Time) (bool, error) {
	return s.putSignal(ctx, pgReplaceSignal, store.EventSignalReplaced, runID, name, payload, "", now)
}
