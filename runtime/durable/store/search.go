package store

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"skydurable/runtime/task"
)

// MinSearch is the shortest search text (ListFilter.Search), in characters:
// both stores index the finished runs by trigrams, and a shorter text has
// none to look up.
const MinSearch = 3

// CheckSearch refuses a search text either store could not answer the same
// way: shorter than MinSearch characters, not UTF-8, or holding a NUL (which
// no PostgreSQL text can). Both stores call it before they search, so they
// accept and refuse the same texts.
func CheckSearch(text string) error {
	switch {
	case !utf8.ValidString(text):
		return task.Errorf(task.InvalidInput, "durable: the search text %q is not UTF-8; hint: search for text as it appears in a run's id, input, output or error", text)
	case strings.ContainsRune(text, 0):
		return task.Errorf(task.InvalidInput, "durable: the search text %q holds a NUL character, which no run's text can; hint: leave it out", text)
	case utf8.RuneCountInString(text) < MinSearch:
		return task.Errorf(task.InvalidInput,
			"durable: the search text %q is shorter than %d characters; hint: give at least %d characters of the id, input, output or error", text, MinSearch, MinSearch)
	}
	return nil
}

// LikePattern is the LIKE pattern that matches any text containing text:
// its %, _ and \ escaped with \ (the statement names \ as the escape
// character where the dialect needs it).
func LikePattern(text string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(text) + "%"
}

// SearchRecent is how many of the newest finished runs a search tests row
// by row before it reads the search index (SearchSQL).
const SearchRecent = 1000

// SearchDialect is what SearchSQL needs of a store's SQL, beyond the
// listing's.
type SearchDialect struct {
	ListDialect
	// Finished is the condition that keeps the finished runs (status in
	// SQLUnclaimable) whose id, input, output or last error contains text,
	// case-insensitively, read from the store's search index, with its
	// arguments. It reads the index only when gate (a SQL condition with one
	// parameter, which SearchSQL passes first) holds, testing it before it
	// reads a row: the condition's text holds gate before its own
	// parameters.
	Finished func(text, gate string) (string, []any)
	// Live is the same condition tested on each row it is given: the
	// unfinished runs, which no search index holds (their rows change with
	// every step, and an index entry per step is what the search must not
	// cost), and the newest SearchRecent finished runs.
	Live func(text string) (string, []any)
}

// SearchSQL builds the search query for f (f.Search set, CheckSearch
// passed), newest first (created_at, id), given the run columns and the
// dialect. It is the union of one branch per part of the table, each
// reading its newest f.Limit matches:
//
//   - the finished runs (done, dead, cancelled, timed_out) from the store's
//     search index, which holds only them: a finished run is not updated
//     again, so the index costs one entry per run, written when it ends.
//     First the newest SearchRecent finished runs are tested row by row
//     (recent; the page cursor bounds the walk, the other filters are
//     tested on its rows): when f.Limit of them match, those are the
//     newest matches,
//     and the index is not read (a text most runs hold would otherwise
//     gather every finished run from the index, to sort them); else the
//     index's matches are gathered (finished). Both are MATERIALIZED CTEs,
//     and the index read is gated by the count of recent matches (the gate
//     of Finished: not read at all when enough matched). A plan that
//     walked the listing index newest first, testing each run, looked
//     cheaper to PostgreSQL's generic plan (it cannot see the text's
//     rarity) and read every finished run for a rare text; the CTE leaves
//     it no order to walk. The condition names the statuses as NOT IN the
//     claimable ones, the words of the PostgreSQL index's predicate, which
//     the finished-runs index of the stats (IN the finished ones) does not
//     match, so the search index is the only index that answers it
//     (TestStoreConformance's plan check);
//   - the unfinished runs of each claimable status, walked newest first on
//     the (status, created_at, id) index and tested row by row: they are
//     few next to the finished ones (retention and compaction keep the
//     table to its finished runs), and an index over them would gain an
//     entry at every step.
//
// f.Status keeps one branch; f.Workflow, f.Parent, f.IDPrefix, f.Scope and the page
// cursor f.Before filter every branch's matches.
func SearchSQL(columns string, f ListFilter, d SearchDialect) (string, []any) {
	const order = " ORDER BY created_at DESC, id DESC LIMIT ?"
	// The page cursor bounds every walk; the other filters are tested on
	// the rows read.
	cursor, cursorArgs := pageConditions(ListFilter{Before: f.Before}, d.Time)
	filters, filterArgs := pageConditions(ListFilter{IDPrefix: f.IDPrefix, Scope: f.Scope}, d.Time)
	if f.Workflow != "" {
		filters += " AND workflow = ?"
		filterArgs = append(filterArgs, f.Workflow)
	}
	if f.Parent != "" {
		filters += " AND parent_id = ?"
		filterArgs = append(filterArgs, f.Parent)
	}
	extra, extraArgs := cursor+filters, append(slices.Clone(cursorArgs), filterArgs...)
	var with string
	var branches []string
	var args []any
	branch := func(from, where string, whereArgs []any) {
		branches = append(branches, fmt.Sprintf("SELECT id FROM (SELECT id FROM _sky_durable_runs%s WHERE %s%s%s) s%d",
			from, where, extra, order, len(branches)))
		args = append(append(append(args, whereArgs...), extraArgs...), f.Limit)
	}
	claimable := From(OpClaim)
	if f.Status == "" || !slices.Contains(claimable, f.Status) {
		where := "status NOT IN (" + SQLClaimable + ")"
		// The walk of the newest runs: in one status, on its index.
		walk := "_sky_durable_runs_list"
		if f.Status != "" {
			walk = "_sky_durable_runs_status_list"
			// The literal comes from AllStatuses, never from f: a status
			// that is none of them matches nothing.
			lit := "NULL"
			if i := slices.Index(AllStatuses, f.Status); i >= 0 {
				lit = "'" + string(AllStatuses[i]) + "'"
			}
			where += " AND status = " + lit
		}
		live, liveArgs := d.Live(f.Search)
		const hits = "(SELECT COUNT(*) FROM recent WHERE hit)"
		cond, condArgs := d.Finished(f.Search, hits+" < ?")
		// The walk reads SearchRecent rows at most: the filters are tested
		// on what it read, not in it (a rare workflow or prefix would
		// otherwise walk the whole table, or plan a sequential scan).
		with = "WITH recent AS MATERIALIZED (SELECT id, created_at, (TRUE" + filters + ") AND " + live + " AS hit" +
			" FROM (SELECT id, created_at, input, output, last_error, workflow, parent_id" +
			" FROM _sky_durable_runs" + d.IndexedBy(walk) + " WHERE " + where + cursor + order + ") w), " +
			"finished AS MATERIALIZED (SELECT id, created_at FROM recent WHERE hit AND " + hits + " >= ?" +
			" UNION ALL SELECT id, created_at FROM _sky_durable_runs WHERE " + where + " AND " + cond + extra + ") "
		branches = append(branches, "SELECT id FROM (SELECT id FROM finished"+order+") s0")
		args = append(append(append(append(args, filterArgs...), liveArgs...), cursorArgs...), SearchRecent, f.Limit, f.Limit)
		args = append(append(append(args, condArgs...), extraArgs...), f.Limit)
	}
	for _, st := range claimable {
		if f.Status == "" || f.Status == st {
			cond, condArgs := d.Live(f.Search)
			branch(d.IndexedBy("_sky_durable_runs_status_list"), "status = '"+string(st)+"' AND "+cond, condArgs)
		}
	}
	return with + "SELECT " + columns + " FROM _sky_durable_runs WHERE id " + d.IDIn(strings.Join(branches, " UNION ALL ")) + order,
		append(args, f.Limit)
}
