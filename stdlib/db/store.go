package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	rc "skydurable/runtime/codec"
	sqldb "skydurable/runtime/db"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skycodec "skydurable/stdlib/codec"
)

// storeSelectRaw is Std.Db.Store.selectRaw: run a query and decode each row,
// as a JSON object keyed by column name, with a record codec.
func storeSelectRaw(a []value.Value) (value.Value, error) {
	d, err := FromValue(a[0])
	if err != nil {
		return nil, value.BadArg("Store.selectRaw", "a Db", a[0])
	}
	c, ok := codecOf(a[1])
	if !ok {
		return nil, value.BadArg("Store.selectRaw", "a Codec", a[1])
	}
	_, sql, params, err := statement("Store.selectRaw", []value.Value{a[0], a[2], a[3]})
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		return selectRows(ctx, d, c, sql, params)
	})}, nil
}

// codecOf reads a Sky Codec (Std.Codec's representation: an Opaque holding
// a runtime/codec codec of Sky values).
func codecOf(v value.Value) (rc.Codec[value.Value], bool) {
	if o, ok := v.(value.Opaque); ok && o.Kind == "Codec" {
		c, ok := o.V.(rc.Codec[value.Value])
		return c, ok
	}
	return rc.Codec[value.Value]{}, false
}

func selectRows(ctx context.Context, d *sqldb.DB, c rc.Codec[value.Value], sql string, params []any) (value.Value, error) {
	rows, err := d.Query(ctx, sql, params...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := keyedColumns(c, rows.Columns())
	raw := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	var out []value.Value
	for i := 0; rows.Next(); i++ {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		v, err := decodeRow(c, rc.Path(fmt.Sprintf("$[%d]", i)), cols, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return value.FromSlice(out), nil
}

// decodeRow decodes one row. Each column starts in the JSON form of its
// driver value (numbers as numbers, text as strings, NULL as null). When the
// codec rejects a column, the column's other readings are tried in turn —
// text that is JSON ("36", "true", "[1,2]") as that JSON, a number as its
// text, 0/1 as a Bool — so an Int field reads a TEXT column holding "36" and
// a String field reads an INTEGER column. If none fits, the first error is
// returned, naming the row and field (`$[3].age: ...`).
func decodeRow(c rc.Codec[value.Value], p rc.Path, cols []string, raw []any) (value.Value, error) {
	obj := make(map[string]any, len(cols))
	alts := make(map[string][]any, len(cols))
	for i, col := range cols {
		first, rest := readings(raw[i])
		obj[col] = first
		alts[col] = rest
	}
	// The error reported is a column's first (its most likely reading's),
	// for the column no reading fits: another column's readings may have
	// been tried and one fitted before it.
	firstErrs := map[string]error{}
	for {
		v, err := c.DecodeValue(obj, p)
		if err == nil {
			return v, nil
		}
		col, ok := failingColumn(err, p, cols)
		if !ok {
			return nil, err
		}
		if firstErrs[col] == nil {
			firstErrs[col] = err
		}
		if len(alts[col]) == 0 {
			return nil, firstErrs[col]
		}
		obj[col], alts[col] = alts[col][0], alts[col][1:]
	}
}

// readings lists the JSON forms a column value may be read as, most likely
// first.
func readings(v any) (any, []any) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return x, []any{strconv.FormatBool(x)}
	case int64:
		n := json.Number(strconv.FormatInt(x, 10))
		if x == 0 || x == 1 {
			return n, []any{string(n), x == 1}
		}
		return n, []any{string(n)}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		return json.Number(s), []any{s}
	case time.Time:
		return sqldb.FormatTime(x), nil
	case []byte:
		return readings(string(x))
	case string:
		var alts []any
		if j, err := rc.Parse(x); err == nil && j != nil {
			if _, isString := j.(string); !isString {
				alts = append(alts, j)
			}
		}
		switch strings.ToLower(x) {
		case "t":
			alts = append(alts, true)
		case "f":
			alts = append(alts, false)
		}
		return x, alts
	}
	return fmt.Sprint(v), nil
}

// failingColumn finds the column a decode error is about, from the path at
// the start of its message (`$[3].age: ...` or `$[3].tags[0]: ...`).
func failingColumn(err error, p rc.Path, cols []string) (string, bool) {
	var e *task.Error
	if !errors.As(err, &e) || e.Kind != task.Decode {
		return "", false
	}
	rest, ok := strings.CutPrefix(e.Message, string(p)+".")
	if !ok {
		return "", false
	}
	best := ""
	for _, col := range cols {
		if len(col) > len(best) && strings.HasPrefix(rest, col) && len(rest) > len(col) && strings.ContainsRune(":.[", rune(rest[len(col)])) {
			best = col
		}
	}
	return best, best != ""
}

// keyedColumns names each result column by the record codec's key it holds:
// a column that is the snake_case of a key the row lacks (`sort_pos` for a
// `sortPos` field of Codec.auto) is read as that key, as Store's tables and
// real Sky's selectRaw name their columns.
func keyedColumns(c rc.Codec[value.Value], cols []string) []string {
	fields := skycodec.ShapeOf(c).Fields
	have := map[string]bool{}
	for _, col := range cols {
		have[col] = true
	}
	out := append([]string(nil), cols...)
	for _, f := range fields {
		if have[f.Key] {
			continue
		}
		snake := skycodec.SnakeCase(f.Key)
		for i, col := range out {
			if col == snake && col != f.Key {
				out[i] = f.Key
			}
		}
	}
	return out
}
