package durable

import (
	"context"
	"errors"
	"strings"

	"skydurable/runtime/db"
)

// queryAll runs a query and scans each row with scanRow.
func queryAll[T any](ctx context.Context, q *db.DB, sql string, args []any, scanRow func(scan func(...any) error) (T, error)) ([]T, error) {
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

// scanRuns reads runs with a dialect's row scanner.
func scanRuns(ctx context.Context, q *db.DB, sql string, args []any, scanRow func(scan func(...any) error) (Run, error)) ([]Run, error) {
	return queryAll(ctx, q, sql, args, scanRow)
}

func isNoRows(err error) bool { return errors.Is(err, db.ErrNoRows) }

func loadSnapshot(ctx context.Context, q *db.DB, sql, id string) (int64, string, bool, error) {
	var seq int64
	var data string
	err := q.QueryRow(ctx, sql, id).Scan(&seq, &data)
	if isNoRows(err) {
		return 0, "", false, nil
	}
	if err != nil {
		return 0, "", false, err
	}
	return seq, data, true, nil
}

// listSQL completes a run query with f's filters, newest first. Each filter
// combination is its own statement (rather than one statement with optional filters), so a cached
// generic plan still uses the matching index: (created_at, id),
// (status, created_at, id) or (workflow, created_at, id).
func listSQL(selectFrom string, f ListFilter) (string, []any) {
	var where []string
	var args []any
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, string(f.Status))
	}
	if f.Workflow != "" {
		where = append(where, "workflow = ?")
		args = append(args, f.Workflow)
	}
	sql := selectFrom
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " ORDER BY created_at DESC, id DESC LIMIT ?"
	return sql, append(args, f.Limit)
}
