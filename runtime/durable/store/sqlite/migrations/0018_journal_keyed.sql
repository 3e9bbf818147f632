-- 0018 journal keyed: the journal becomes a WITHOUT ROWID table keyed by
-- its primary key (run_id, step_id). A journal row was in three b-trees
-- (the table by rowid, the primary key's index, the order index (run_id,
-- seq)) and is now in two (the table by its primary key, the order index):
-- about 3 of the 28.8 pages a 3-step run wrote to the WAL
-- (docs/benchmarks.md, "SQLite: the journal keyed by its primary key").
-- The columns, the primary key and the order index are those of before.
-- A step result larger than about 1 KB is stored partly on an overflow
-- page (a rowid table kept up to about 4 KB in the row's page).
CREATE TABLE _sky_durable_journal_keyed (
  run_id     TEXT NOT NULL,
  step_id    TEXT NOT NULL,
  result     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  kind       TEXT NOT NULL DEFAULT 'step',
  seq        INTEGER,
  PRIMARY KEY (run_id, step_id)
) WITHOUT ROWID;
INSERT INTO _sky_durable_journal_keyed (run_id, step_id, result, created_at, kind, seq)
  SELECT run_id, step_id, result, created_at, kind, seq FROM _sky_durable_journal;
DROP TABLE _sky_durable_journal;
ALTER TABLE _sky_durable_journal_keyed RENAME TO _sky_durable_journal;
CREATE UNIQUE INDEX _sky_durable_journal_order ON _sky_durable_journal (run_id, seq);
