package postgres

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// Time travel (store.TimeTravel): fork and rewind, each one transaction of
// statements on the primary keys, the journal order index and the parent
// index; store.TimeTravelSQL runs them. A list parameter is one JSON array
// (pgList), as the claim's.

// pgList is the text array a JSON array parameter holds.
const pgList = `ARRAY(SELECT jsonb_array_elements_text(CAST(? AS JSONB)))`

// pgTimeTravel is the statements of fork and rewind on PostgreSQL: on the
// primary keys, the journal order index and the parent index; the run a
// rewind takes is locked.
var pgTimeTravel = store.NewTimeTravelSQL(store.TimeTravelDialect{
	Clock:     pgClock,
	CreatedAt: pgCreatedAt,
	In:        func(column string) string { return column + " = ANY (" + pgList + ")" },
	Text:      "CAST(? AS TEXT)",
	Lock:      "\n   FOR UPDATE",
})

// timeTravel is this dialect's fork and rewind (store.TimeTravelSQL).
func (s *Store) timeTravel() store.TimeTravelSQL {
	t := pgTimeTravel
	t.DB, t.Hook, t.At, t.Record, t.RecordPriorDone = s.d, s.hook, clockArg, s.recordEvent, pgRecordPriorDone
	return t
}

func (s *Store) ForkRun(ctx context.Context, f store.Fork, now time.Time) (string, error) {
	return s.timeTravel().ForkRun(ctx, f, now)
}

func (s *Store) RewindRun(ctx context.Context, c store.Cut, now time.Time) (bool, string, error) {
	return s.timeTravel().RewindRun(ctx, c, now)
}
