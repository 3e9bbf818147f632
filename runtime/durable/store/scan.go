package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"skydurable/runtime/db"
)

// QueryAll runs a query and scans each row with scanRow.
func QueryAll[T any](ctx context.Context, q *db.DB, sql string, args []any, scanRow func(scan func(...any) error) (T, error)) ([]T, error) {
	rs, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []T
	for rs.Next() {
		v, err := scanRow(rs.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rs.Err()
}

// QueryStrings runs a query of one text column.
func QueryStrings(ctx context.Context, q *db.DB, sql string, args []any) ([]string, error) {
	return QueryAll(ctx, q, sql, args, func(scan func(...any) error) (string, error) {
		var s string
		return s, scan(&s)
	})
}

// ScanRuns reads runs with a dialect's row scanner.
func ScanRuns(ctx context.Context, q *db.DB, sql string, args []any, scanRow func(scan func(...any) error) (Run, error)) ([]Run, error) {
	return QueryAll(ctx, q, sql, args, scanRow)
}

func IsNoRows(err error) bool { return errors.Is(err, db.ErrNoRows) }

func QuerySnapshot(ctx context.Context, q *db.DB, sql, id string) (int64, string, bool, error) {
	var seq int64
	var data string
	err := q.QueryRow(ctx, sql, id).Scan(&seq, &data)
	if IsNoRows(err) {
		return 0, "", false, nil
	}
	if err != nil {
		return 0, "", false, err
	}
	return seq, data, true, nil
}

// ListDialect is what ListSQL needs of a store's SQL: its index hint
// (SQLite's "INDEXED BY", nothing on PostgreSQL), its form of a time
// parameter, and its test of id against the ids a subquery returns (on
// PostgreSQL "= ANY (ARRAY(...))", so the runs are read by key whatever the
// table's statistics: an IN (subquery) was planned as a hash join over a
// sequential scan of a table without them).
type ListDialect struct {
	IndexedBy func(index string) string
	Time      func(time.Time) any
	IDIn      func(subquery string) string
	// Namespace is the expression of the namespace index's first column:
	// the namespace of a run's id outside the default namespace; Namespaced
	// is that partial index's predicate, word for word (an id holding
	// NamespaceSep), which a query must state for its planner to use it
	// (migration 0016 on PostgreSQL, 0014 on SQLite).
	Namespace, Namespaced string
	// Unnamespaced is the test that an id is the default namespace's (it
	// holds no NamespaceSep), written so that PostgreSQL's planner, which
	// keeps no statistics on it, estimates it true of a third of the runs
	// (an inequality's default): the default namespace's listing then keeps
	// the listing index. (NOT LIKE '%…%' was estimated true of a few rows
	// on a table without statistics: a sequential scan and a sort.)
	Unnamespaced string
}

// ListSQL builds the listing query for f, newest first, given the run
// columns and the dialect: by created_at, which every store keeps to the
// millisecond, then by id, both descending, so runs started within one
// millisecond list in the same order on every store. Each filter combination is
// its own statement, so a cached generic plan still uses its index, and each
// reads only the first rows of an index scan:
//
//   - no filter: (created_at, id);
//   - no filter but a namespace other than the default one (f.Scope):
//     (namespace, created_at, id), an index of those namespaces' runs only,
//     so a database that uses none pays nothing for it; the default
//     namespace's listing reads (created_at, id) and skips the others' runs;
//   - a status: (status, created_at, id);
//   - a workflow and a status: (workflow, status, created_at, id);
//   - a workflow alone: the same index, the newest Limit runs of each status
//     (six index-only scans), merged and cut to Limit.
//
// A page cursor (f.Before) is a row comparison on (created_at, id), a range
// of the same index, so the thousandth page costs what the first does. An id
// prefix is a filter on the rows the index walk reads: it costs as many rows
// as there are newer runs not matching it (a rare prefix among a million
// runs reads them all).
func ListSQL(columns string, f ListFilter, d ListDialect) (string, []any) {
	indexedBy, timeArg := d.IndexedBy, d.Time
	const order = " ORDER BY created_at DESC, id DESC LIMIT ?"
	from := " FROM _sky_durable_runs"
	// extra are the page and prefix conditions, the same in every branch.
	extra, extraArgs := pageConditions(f, timeArg)
	with := func(args ...any) []any { return append(append(args, extraArgs...), f.Limit) }
	switch {
	case f.Parent != "":
		return listChildrenSQL(columns, f, indexedBy, extra, with)
	case f.Workflow == "" && f.Status == "" && f.Scope.On:
		// The scope is not the generic filter here: the namespace index's
		// first column, or for the default namespace the listing index
		// with its rows tested.
		prefix := f.Scope.Prefix
		f.Scope = Scope{}
		extra, extraArgs = pageConditions(f, timeArg)
		if prefix == "" {
			return "SELECT " + columns + from + indexedBy("_sky_durable_runs_list") + " WHERE " + d.Unnamespaced + extra + order, with()
		}
		return "SELECT " + columns + from + indexedBy("_sky_durable_runs_namespace_list") + " WHERE " + d.Namespaced + " AND " + d.Namespace + " = ?" + extra + order,
			with(strings.TrimSuffix(prefix, NamespaceSep))
	case f.Workflow == "" && f.Status == "":
		return "SELECT " + columns + from + indexedBy("_sky_durable_runs_list") + " WHERE TRUE" + extra + order, with()
	case f.Workflow == "":
		return "SELECT " + columns + from + indexedBy("_sky_durable_runs_status_list") + " WHERE status = ?" + extra + order,
			with(string(f.Status))
	case f.Status != "":
		return "SELECT " + columns + from + indexedBy("_sky_durable_runs_workflow_status_list") + " WHERE workflow = ? AND status = ?" + extra + order,
			with(f.Workflow, string(f.Status))
	}
	branches := make([]string, len(AllStatuses))
	var args []any
	for i, st := range AllStatuses {
		branches[i] = fmt.Sprintf("SELECT id FROM (SELECT id%s%s WHERE workflow = ? AND status = '%s'%s%s) s%d",
			from, indexedBy("_sky_durable_runs_workflow_status_list"), st, extra, order, i)
		args = append(args, with(f.Workflow)...)
	}
	return "SELECT " + columns + from + " WHERE id " + d.IDIn(strings.Join(branches, " UNION ALL ")) + order, append(args, f.Limit)
}

// listChildrenSQL is ListSQL for f.Parent: the parent index
// (parent_id, created_at, id), a status and a workflow filtering its rows.
func listChildrenSQL(columns string, f ListFilter, indexedBy func(string) string, extra string, with func(...any) []any) (string, []any) {
	where, args := " WHERE parent_id = ?", []any{f.Parent}
	if f.Status != "" {
		where += " AND status = ?"
		args = append(args, string(f.Status))
	}
	if f.Workflow != "" {
		where += " AND workflow = ?"
		args = append(args, f.Workflow)
	}
	return "SELECT " + columns + " FROM _sky_durable_runs" + indexedBy("_sky_durable_runs_parent") + where + extra +
		" ORDER BY created_at DESC, id DESC LIMIT ?", with(args...)
}

// pageConditions are the conditions of f's page cursor, id prefix and scope, each
// starting " AND ", with their arguments: the same in every branch of a
// listing (ListSQL) or a search (SearchSQL).
func pageConditions(f ListFilter, timeArg func(time.Time) any) (string, []any) {
	var extra string
	var args []any
	if f.Before != nil {
		extra += " AND (created_at, id) < (?, ?)"
		args = append(args, timeArg(f.Before.CreatedAt), f.Before.ID)
	}
	if f.IDPrefix != "" {
		extra += " AND substr(id, 1, ?) = ?"
		args = append(args, utf8.RuneCountInString(f.IDPrefix), f.IDPrefix)
	}
	if f.Scope.On {
		extra += " AND " + ScopeID
		args = append(args, f.Scope.Args()...)
	}
	return extra, args
}
