package db

import (
	"skydurable/runtime/task"
)

// Rows is a result set. Call Next before each row, Scan to read it, Err
// after the loop, and Close when done (Close is idempotent).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Columns() []string
	Err() error
	Close()
}

// Row is the first row of a QueryRow result.
type Row interface {
	Scan(dest ...any) error
}

// rawRows is a driver's result set yielding raw driver values per row.
type rawRows interface {
	Next() bool
	Values() ([]any, error)
	Columns() []string
	Err() error
	Close()
}

// rows adapts rawRows to Rows, scanning through assign and mapping errors.
type rows struct {
	raw     rawRows
	dialect Dialect
	sql     string
}

func (r *rows) Next() bool        { return r.raw.Next() }
func (r *rows) Columns() []string { return r.raw.Columns() }
func (r *rows) Close()            { r.raw.Close() }

func (r *rows) Err() error {
	if err := r.raw.Err(); err != nil {
		return mapError(r.dialect, r.sql, err)
	}
	return nil
}

func (r *rows) Scan(dest ...any) error {
	vals, err := r.raw.Values()
	if err != nil {
		return mapError(r.dialect, r.sql, err)
	}
	return scanInto(r.raw.Columns(), vals, dest)
}

// row is QueryRow's result: the first row's values, or the error.
type row struct {
	vals []any
	cols []string
	sql  string
	err  error
}

func (r *row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return scanInto(r.cols, r.vals, dest)
}

// bufferedRows is a result set read fully into memory (used in transactions).
type bufferedRows struct {
	cols []string
	data [][]any
	pos  int
}

// readAll drains raw into memory and closes it.
func readAll(raw rawRows) (*bufferedRows, error) {
	defer raw.Close()
	b := &bufferedRows{cols: raw.Columns(), pos: -1}
	for raw.Next() {
		vals, err := raw.Values()
		if err != nil {
			return nil, err
		}
		norm := make([]any, len(vals))
		for i, v := range vals {
			norm[i] = normalize(v)
		}
		b.data = append(b.data, norm)
	}
	if err := raw.Err(); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *bufferedRows) Next() bool {
	if b.pos+1 >= len(b.data) {
		b.pos = len(b.data)
		return false
	}
	b.pos++
	return true
}

func (b *bufferedRows) Values() ([]any, error) {
	if b.pos < 0 || b.pos >= len(b.data) {
		return nil, task.New(task.InvalidInput, "db: Scan called without a current row; call Next first")
	}
	return b.data[b.pos], nil
}

func (b *bufferedRows) Columns() []string { return b.cols }
func (b *bufferedRows) Err() error        { return nil }
func (b *bufferedRows) Close()            {}
