package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	sqldb "skydurable/runtime/db"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// This file holds what real Sky's Std.Db has beyond the contract: plain
// parameters (`List String`, `Maybe Int`, ...) next to SqlValue, SqlBytes
// and SqlTime, the row readers getField / getString / getInt / getBool,
// close, and migrate.

// args reads the parameter list of exec, query and selectRaw. Each element
// is a SqlValue (SqlString, SqlInt, SqlFloat, SqlBool, SqlNull, SqlBytes,
// SqlTime), a plain String, Int, Float or Bool (real Sky programs pass
// `List String`), or a Maybe of one of those (Nothing is NULL).
func args(fn string, v value.Value) ([]any, error) {
	l, ok := v.(*value.List)
	if !ok && v != nil {
		return nil, value.BadArg(fn, "a List of parameters (SqlValue, String, Int, Float, Bool or Maybe)", v)
	}
	var out []any
	for i := 1; l != nil; l, i = l.Tail, i+1 {
		arg, err := param(l.Head)
		if err != nil {
			return nil, &value.RuntimeError{Message: fmt.Sprintf("%s: parameter %d is %s, which is not a SQL value; hint: pass a SqlValue (SqlString \"a\", SqlInt 1, SqlNull, ...), a String, Int, Float, Bool or a Maybe of one", fn, i, value.Show(l.Head))}
		}
		out = append(out, arg)
	}
	return out, nil
}

// param is the driver argument for one Sky parameter.
func param(v value.Value) (any, error) {
	switch x := v.(type) {
	case string, int64, bool:
		return x, nil
	case float64:
		return x, nil
	case value.Ctor:
		if len(x.Args) == 0 {
			switch x.Name {
			case "SqlNull", "Nothing":
				return nil, nil
			}
			break
		}
		if len(x.Args) != 1 {
			break
		}
		a := x.Args[0]
		switch x.Name {
		case "SqlString", "SqlInt", "SqlBool":
			return a, nil
		case "SqlFloat":
			if f, ok := value.AsFloat(a); ok {
				return f, nil
			}
		case "SqlBytes":
			if s, ok := a.(string); ok {
				return []byte(s), nil
			}
		case "SqlTime":
			if ms, ok := a.(int64); ok {
				return time.UnixMilli(ms).UTC(), nil
			}
		case "Just":
			if _, nested := a.(value.Ctor); !nested {
				return param(a)
			}
		}
	}
	return nil, fmt.Errorf("not a SQL value")
}

func parityKernels() []value.Kernel {
	return []value.Kernel{
		rowReader("Db_getField", "Db.getField", func(s string) (value.Value, bool) { return s, true }),
		rowReader("Db_getString", "Db.getString", func(s string) (value.Value, bool) { return s, true }),
		rowReader("Db_getInt", "Db.getInt", func(s string) (value.Value, bool) {
			if s == "" {
				return int64(0), true // NULL reads as ""
			}
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			return n, err == nil
		}),
		rowReader("Db_getBool", "Db.getBool", func(s string) (value.Value, bool) {
			switch strings.ToLower(s) {
			case "1", "t", "true":
				return true, true
			case "", "0", "f", "false":
				return false, true
			}
			return nil, false
		}),
		{Name: "Db_migrateApply", Arity: 2, Fn: dbMigrate},
	}
}

// rowReader is a kernel `String -> row -> a` reading a column of a row:
// a Dict from Db.query (or any Dict keyed by String), or a record (a field
// by name). A value that is not text is read as its SQL text (an Int as
// digits, a Bool as true/false, Nothing as NULL). A column the row does not
// have is a runtime error listing the ones it has; a text conv cannot read
// is one naming the value.
func rowReader(name, fn string, conv func(string) (value.Value, bool)) value.Kernel {
	return value.Kernel{Name: name, Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
		col, ok := a[0].(string)
		if !ok {
			return nil, value.BadArg(fn, "a column name (String)", a[0])
		}
		v, cols, err := rowColumn(fn, col, a[1])
		if err != nil {
			return nil, err
		}
		if cols != nil {
			return nil, &value.RuntimeError{Message: fmt.Sprintf("%s %q: the row has no column %q; hint: its columns are %s", fn, col, col, strings.Join(cols, ", "))}
		}
		s, ok := columnText(v)
		if !ok {
			return nil, &value.RuntimeError{Message: fmt.Sprintf("%s %q: the value %s is not a column value", fn, col, value.Show(v))}
		}
		out, ok := conv(s)
		if !ok {
			return nil, &value.RuntimeError{Message: fmt.Sprintf("%s %q: the value %q cannot be read as %s", fn, col, s, strings.TrimPrefix(fn, "Db.get"))}
		}
		return out, nil
	}}
}

// rowColumn is the value of col in row (a Dict or a record); when the row
// has no such column, cols lists the ones it has.
func rowColumn(fn, col string, row value.Value) (v value.Value, cols []string, err error) {
	switch r := row.(type) {
	case *value.Dict:
		v, found, err := r.Get(col)
		if err != nil || found {
			return v, nil, err
		}
		for _, k := range r.Keys().Slice() {
			cols = append(cols, fmt.Sprint(k))
		}
		return nil, cols, nil
	case *value.Record:
		if v, ok := r.Get(col); ok {
			return v, nil, nil
		}
		return nil, r.Names, nil
	}
	return nil, nil, value.BadArg(fn, "a row (a Dict String String from Db.query, or a record)", row)
}

// columnText is v as the text a query would have read: NULL (Nothing) is "".
func columnText(v value.Value) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return value.ShowFloat(x), true
	case bool:
		return strconv.FormatBool(x), true
	case value.Ctor:
		switch {
		case x.Name == "Nothing" && len(x.Args) == 0:
			return "", true
		case x.Name == "Just" && len(x.Args) == 1:
			return columnText(x.Args[0])
		}
	}
	return "", false
}

// close closes a Db; a pool Db.connect opened is forgotten, so the next
// connect opens a fresh one.
func (c *connector) close(a []value.Value) (value.Value, error) {
	d, err := FromValue(a[0])
	if err != nil {
		return nil, value.BadArg("Db.close", "a Db", a[0])
	}
	return value.Task{T: task.From(func(context.Context) (value.Value, error) {
		c.mu.Lock()
		for cfg, p := range c.pools {
			if p == d {
				delete(c.pools, cfg)
			}
		}
		c.mu.Unlock()
		if err := d.Close(); err != nil {
			return nil, err
		}
		return value.Unit{}, nil
	})}, nil
}

// migrationsTable records the migrations Db.migrate applied, by name, with
// the SHA-256 of their SQL.
const migrationsTable = `CREATE TABLE IF NOT EXISTS _sky_migrations (
	name TEXT PRIMARY KEY,
	checksum TEXT NOT NULL,
	applied_at BIGINT NOT NULL
)`

// dbMigrate is Db.migrate's kernel over (name, sql) pairs: each migration
// not yet recorded runs with its record in one transaction; a recorded one
// is skipped when its SQL is unchanged and refused (Conflict) when it was
// edited. The names applied now are the result.
func dbMigrate(a []value.Value) (value.Value, error) {
	const fn = "Db.migrate"
	d, err := FromValue(a[0])
	if err != nil {
		return nil, value.BadArg(fn, "a Db", a[0])
	}
	l, ok := a[1].(*value.List)
	if !ok && a[1] != nil {
		return nil, value.BadArg(fn, "a List Migration", a[1])
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		ms, err := migrations(fn, l)
		if err != nil {
			return nil, err
		}
		if _, err := d.ExecRaw(ctx, migrationsTable); err != nil {
			return nil, err
		}
		var applied []value.Value
		for _, m := range ms {
			sum := sha256.Sum256([]byte(m.sql))
			checksum := hex.EncodeToString(sum[:])
			ran := false
			err := d.WithTransaction(ctx, func(ctx context.Context, tx *sqldb.DB) error {
				rows, err := tx.QueryMaps(ctx, "SELECT checksum FROM _sky_migrations WHERE name = ?", m.name)
				if err != nil {
					return err
				}
				if len(rows) > 0 {
					if rows[0]["checksum"] != checksum {
						return task.Errorf(task.Conflict, "%s: migration %q was applied with different SQL (checksum %.12s…, now %.12s…); hint: never edit an applied migration, add a new one that makes the change", fn, m.name, rows[0]["checksum"], checksum)
					}
					return nil
				}
				if _, err := tx.ExecRaw(ctx, m.sql); err != nil {
					te := task.As(err)
					return &task.Error{Kind: te.Kind, Message: fmt.Sprintf("%s: migration %q failed: %s", fn, m.name, te.Message), Cause: err}
				}
				_, err = tx.Exec(ctx, "INSERT INTO _sky_migrations (name, checksum, applied_at) VALUES (?, ?, ?)", m.name, checksum, time.Now().UnixMilli())
				ran = err == nil
				return err
			})
			if err != nil {
				return nil, err
			}
			if ran {
				applied = append(applied, m.name)
			}
		}
		return value.FromSlice(applied), nil
	})}, nil
}

type migration struct{ name, sql string }

// migrations reads Db.migrate's (name, sql) pairs; an empty or repeated
// name, or empty SQL, fails InvalidInput naming it.
func migrations(fn string, l *value.List) ([]migration, error) {
	var ms []migration
	seen := map[string]bool{}
	for _, v := range l.Slice() {
		t, ok := v.(value.Tuple)
		if !ok || len(t) != 2 {
			return nil, value.BadArg(fn, "a List Migration", v)
		}
		name, _ := t[0].(string)
		sql, _ := t[1].(string)
		switch {
		case strings.TrimSpace(name) == "":
			return nil, task.Errorf(task.InvalidInput, "%s: a migration has an empty name; hint: name each one, e.g. \"0001_users\"", fn)
		case seen[name]:
			return nil, task.Errorf(task.InvalidInput, "%s: two migrations are named %q; hint: a name identifies a migration once applied, give each its own", fn, name)
		case strings.TrimSpace(sql) == "":
			return nil, task.Errorf(task.InvalidInput, "%s: migration %q has no SQL; hint: Db.defaultMigration %q |> Db.withSql \"CREATE TABLE ...\"", fn, name, name)
		}
		seen[name] = true
		ms = append(ms, migration{name, sql})
	}
	return ms, nil
}
