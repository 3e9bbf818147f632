package sqlite

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// Time travel (store.TimeTravel): fork and rewind, each one transaction
// (SQLite's single writer), store.TimeTravelSQL's procedure over
// store.NewTimeTravelSQL's statements. A list parameter is one JSON array
// (sqliteList).

// sqliteList is the set of values a JSON array parameter holds.
const sqliteList = `(SELECT value FROM json_each(?))`

// sqliteTimeTravel is the statements of fork and rewind on SQLite (its one
// writer needs no row lock).
var sqliteTimeTravel = store.NewTimeTravelSQL(store.TimeTravelDialect{
	Clock:     `WITH clock AS (SELECT ? AS now)`,
	CreatedAt: "clock.now",
	In:        func(column string) string { return column + " IN " + sqliteList },
	Text:      "?",
})

// timeTravel is this dialect's fork and rewind (store.TimeTravelSQL).
func (s *Store) timeTravel() store.TimeTravelSQL {
	t := sqliteTimeTravel
	t.DB, t.Hook, t.At, t.Record, t.RecordPriorDone = s.d, s.hook, func(t time.Time) any { return ms(t) }, s.recordEvent, sqliteRecordPriorDone
	return t
}

func (s *Store) ForkRun(ctx context.Context, f store.Fork, now time.Time) (string, error) {
	return s.timeTravel().ForkRun(ctx, f, now)
}

func (s *Store) RewindRun(ctx context.Context, c store.Cut, now time.Time) (bool, string, error) {
	return s.timeTravel().RewindRun(ctx, c, now)
}
