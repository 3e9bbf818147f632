-- 0019 runs fillfactor: new pages of the runs table are filled to 80%, so a
-- row version that a lease renewal, a claim or a completion writes finds
-- room on its own page. A step's lease renewal changes no indexed column
-- and is a HOT update (no index entry) only when its new version fits on
-- the page of the old one: on pages filled to the brim, about 1 renewal in
-- 25 in the 3-step benchmark was written to another page, with an entry in
-- each of the table's indexes (docs/benchmarks.md, "Room on the page").
-- Only pages filled after the migration keep the room; the table is not
-- rewritten. TestStepsStayHotOnAFullPage holds it.
ALTER TABLE _sky_durable_runs SET (fillfactor = 80);
