package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	rc "skydurable/runtime/codec"
	sqldb "skydurable/runtime/db"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skycodec "skydurable/stdlib/codec"
)

// The kernels behind Std.Db.Store's schema-driven half: a Store's columns
// come from its record codec (one column a field, named in snake_case, of a
// kind from the field's codec), and the DDL and row encoding are done here;
// the SQL of queries and writes is built in Store.sky.
//
// A column kind is a base kind — "text", "int", "real", "bool" or "json" (a
// value stored as JSON text) — with "?" for a Maybe, "!" for a serial
// primary key, then "|"-separated DDL flags: "u" (UNIQUE), "dnow" (DEFAULT
// the current time), "touch" (stamped by Store.update), "dtext=…",
// "dint=…", "dbool=true|false" (DEFAULTs).
func storeSchemaKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Store_columns", Arity: 1, Fn: storeColumns},
		{Name: "Store_snakeName", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			s, ok := a[0].(string)
			if !ok {
				return nil, value.BadArg("Store.snakeName", "a String", a[0])
			}
			return skycodec.SnakeCase(s), nil
		}},
		{Name: "Store_rowValues", Arity: 2, Fn: storeRowValues},
		{Name: "Store_sqlName", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			s, ok := a[0].(string)
			if !ok {
				return nil, value.BadArg("Store.sqlName", "a String", a[0])
			}
			return sqlIdent(s), nil
		}},
		{Name: "Store_sqlOf", Arity: 2, Fn: storeSQLOf},
		{Name: "Store_checkName", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			s, _ := a[0].(string)
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				return value.Unit{}, checkSQLName(s)
			})}, nil
		}},
		{Name: "Store_create", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			return storeDDL("Store.create", a, func(ctx context.Context, d *sqldb.DB, t table) (value.Value, error) {
				sql, err := t.createSQL(d.Dialect(), false)
				if err != nil {
					return nil, err
				}
				_, err = d.ExecRaw(ctx, sql)
				return value.Unit{}, err
			})
		}},
		{Name: "Store_migrate", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			return storeDDL("Store.migrate", a, migrateTable)
		}},
	}
}

// table is a Store's schema as Store.sky passes it to the DDL kernels.
type table struct {
	name, pk string
	cols     []column
}

type column struct{ name, kind string }

func storeDDL(fn string, a []value.Value, run func(context.Context, *sqldb.DB, table) (value.Value, error)) (value.Value, error) {
	d, err := FromValue(a[0])
	if err != nil {
		return nil, value.BadArg(fn, "a Db", a[0])
	}
	name, _ := a[1].(string)
	pk, _ := a[3].(string)
	t := table{name: name, pk: pk}
	l, _ := a[2].(*value.List)
	for _, c := range l.Slice() {
		tu, ok := c.(value.Tuple)
		if !ok || len(tu) != 2 {
			return nil, value.BadArg(fn, "a list of ( column, kind ) pairs", a[2])
		}
		col, _ := tu[0].(string)
		kind, _ := tu[1].(string)
		t.cols = append(t.cols, column{col, kind})
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		if err := checkSQLName(t.name); err != nil {
			return nil, err
		}
		for _, c := range t.cols {
			if err := checkSQLName(c.name); err != nil {
				return nil, err
			}
		}
		return run(ctx, d, t)
	})}, nil
}

// checkSQLName refuses a table or column name that is not a plain SQL name
// (letters, digits, `_`, optionally `schema.table`): names are written into
// the SQL.
func checkSQLName(name string) error {
	parts := strings.Split(name, ".")
	ok := len(parts) <= 2
	for _, p := range parts {
		ok = ok && p != "" && !(p[0] >= '0' && p[0] <= '9')
		for _, r := range p {
			ok = ok && (r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}
	}
	if !ok {
		return task.Errorf(task.InvalidInput, "Std.Db.Store: %q is not a plain SQL name (letters, digits and _, not starting with a digit); hint: a Store's table and column names come from Store.fromCodec and the codec's field names", name)
	}
	return nil
}

// createSQL is the CREATE TABLE statement of t in the dialect.
func (t table) createSQL(d sqldb.Dialect, ifNotExists bool) (string, error) {
	var defs []string
	for _, c := range t.cols {
		def, err := c.ddl(d, c.name == t.pk)
		if err != nil {
			return "", err
		}
		defs = append(defs, def)
	}
	guard := ""
	if ifNotExists {
		guard = "IF NOT EXISTS "
	}
	return "CREATE TABLE " + guard + t.name + " (" + strings.Join(defs, ", ") + ")", nil
}

// ddl is the column definition of c ("qty INTEGER", "id TEXT PRIMARY KEY NOT NULL").
func (c column) ddl(d sqldb.Dialect, pk bool) (string, error) {
	parts := strings.Split(c.kind, "|")
	base := parts[0]
	serial := strings.HasSuffix(base, "!")
	base = strings.TrimSuffix(strings.TrimSuffix(base, "!"), "?")
	types := map[string][2]string{ // [postgres, sqlite]
		"text": {"TEXT", "TEXT"}, "json": {"TEXT", "TEXT"}, "int": {"BIGINT", "INTEGER"},
		"real": {"DOUBLE PRECISION", "REAL"}, "bool": {"BOOLEAN", "INTEGER"},
	}
	ty, ok := types[base]
	if !ok {
		return "", task.Errorf(task.InvalidInput, "Std.Db.Store: column %s has the kind %q, which is not one of text, int, real, bool, json", c.name, c.kind)
	}
	sqlite := d == sqldb.SQLite
	name := sqlIdent(c.name)
	def := name + " " + ty[0]
	if sqlite {
		def = name + " " + ty[1]
	}
	switch {
	case pk && serial && sqlite:
		def = name + " INTEGER PRIMARY KEY AUTOINCREMENT"
	case pk && serial:
		def = name + " BIGSERIAL PRIMARY KEY"
	case pk:
		def += " PRIMARY KEY NOT NULL"
	}
	for _, flag := range parts[1:] {
		name, arg, _ := strings.Cut(flag, "=")
		switch name {
		case "u":
			def += " UNIQUE"
		case "dnow":
			def += " DEFAULT CURRENT_TIMESTAMP"
		case "dtext":
			def += " DEFAULT '" + strings.ReplaceAll(arg, "'", "''") + "'"
		case "dint":
			var n int64
			if _, err := fmt.Sscan(arg, &n); err != nil {
				return "", task.Errorf(task.InvalidInput, "Std.Db.Store: column %s has the default %q, which is not an Int", c.name, arg)
			}
			def += fmt.Sprintf(" DEFAULT %d", n)
		case "dbool":
			switch {
			case sqlite && arg == "true":
				def += " DEFAULT 1"
			case sqlite:
				def += " DEFAULT 0"
			case arg == "true":
				def += " DEFAULT TRUE"
			default:
				def += " DEFAULT FALSE"
			}
		}
	}
	return def, nil
}

// migrateTable creates t when it is missing and adds the columns it lacks
// (never dropping, renaming or retyping one); it returns the SQL it ran.
func migrateTable(ctx context.Context, d *sqldb.DB, t table) (value.Value, error) {
	have, err := existingColumns(ctx, d, t.name)
	if err != nil {
		return nil, err
	}
	var applied []value.Value
	if len(have) == 0 {
		sql, err := t.createSQL(d.Dialect(), true)
		if err != nil {
			return nil, err
		}
		if _, err := d.ExecRaw(ctx, sql); err != nil {
			return nil, err
		}
		return value.FromSlice([]value.Value{sql}), nil
	}
	for _, c := range t.cols {
		if have[strings.ToLower(c.name)] {
			continue
		}
		def, err := c.ddl(d.Dialect(), false)
		if err != nil {
			return nil, err
		}
		sql := "ALTER TABLE " + t.name + " ADD COLUMN " + def
		if _, err := d.ExecRaw(ctx, sql); err != nil {
			return nil, err
		}
		applied = append(applied, sql)
	}
	return value.FromSlice(applied), nil
}

// existingColumns are the lower-cased column names of a table (none when
// it does not exist).
func existingColumns(ctx context.Context, d *sqldb.DB, name string) (map[string]bool, error) {
	q := "SELECT name AS c FROM pragma_table_info(?)"
	if d.Dialect() == sqldb.Postgres {
		q = "SELECT column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = lower(?)"
	}
	rows, err := d.QueryMaps(ctx, q, name)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, r := range rows {
		out[strings.ToLower(r["c"])] = true
	}
	return out, nil
}

// storeColumns is Store.fromCodec's column list: one ( column, kind ) a
// field of the record codec, in the order the codec writes them.
func storeColumns(a []value.Value) (value.Value, error) {
	c, err := skycodec.FromValue(a[0])
	if err != nil {
		return nil, value.BadArg("Store.fromCodec", "a Codec", a[0])
	}
	shape := skycodec.ShapeOf(c)
	if shape.Fields == nil {
		return nil, &value.RuntimeError{Message: "Store.fromCodec needs the codec of a record (Codec.auto or Codec.object ... |> Codec.buildObject): its fields become the table's columns"}
	}
	cols := make([]value.Value, len(shape.Fields))
	for i, f := range shape.Fields {
		kind := f.Shape.Kind
		if f.Shape.Fields != nil {
			kind = "json"
		}
		if f.Shape.Nullable {
			kind += "?"
		}
		cols[i] = value.Tuple{skycodec.SnakeCase(f.Key), kind}
	}
	return value.FromSlice(cols), nil
}

// encodeWith encodes a[1] with the codec a[0] and parses the JSON back,
// for the kernels that turn a value into SqlValues.
func encodeWith(fn string, a []value.Value) (skycodec.Codec, any, string, error) {
	c, err := skycodec.FromValue(a[0])
	if err != nil {
		return c, nil, "", value.BadArg(fn, "a Codec", a[0])
	}
	text, err := c.Encode(a[1])
	if err != nil {
		return c, nil, "", err
	}
	j, err := rc.Parse(text)
	return c, j, text, err
}

// storeRowValues encodes a record with its codec and gives each field as
// ( column, SqlValue ), in the codec's order: strings, numbers, booleans and
// null as themselves, lists and objects as their JSON text.
func storeRowValues(a []value.Value) (value.Value, error) {
	c, j, text, err := encodeWith("Store.insert", a)
	if err != nil {
		return nil, err
	}
	shape := skycodec.ShapeOf(c)
	obj, ok := j.(map[string]any)
	if !ok || shape.Fields == nil {
		return nil, &value.RuntimeError{Message: "Std.Db.Store: the codec does not write a record, so it has no columns: " + rc.Preview(text)}
	}
	out := make([]value.Value, len(shape.Fields))
	for i, f := range shape.Fields {
		out[i] = value.Tuple{skycodec.SnakeCase(f.Key), sqlValueOfJSON(obj[f.Key])}
	}
	return value.FromSlice(out), nil
}

// storeSQLOf is Store.sqlOf: a value encoded with its codec, as the SqlValue
// a column holding it compares with.
func storeSQLOf(a []value.Value) (value.Value, error) {
	_, j, _, err := encodeWith("Store.sqlOf", a)
	if err != nil {
		return nil, err
	}
	return sqlValueOfJSON(j), nil
}

func sqlValueOfJSON(j any) value.Value {
	one := func(name string, v value.Value) value.Value { return value.Ctor{Name: name, Args: []value.Value{v}} }
	switch x := j.(type) {
	case nil:
		return value.Ctor{Name: "SqlNull"}
	case string:
		return one("SqlString", x)
	case bool:
		return one("SqlBool", x)
	case json.Number:
		if i, ok := rc.IntOf(x); ok && !strings.ContainsAny(string(x), ".eE") {
			return one("SqlInt", i)
		}
		f, _ := x.Float64()
		return one("SqlFloat", f)
	}
	b, _ := json.Marshal(j)
	return one("SqlString", string(b))
}
