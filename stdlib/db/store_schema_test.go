package db

import (
	"context"
	"strings"
	"testing"

	sqldb "skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skycodec "skydurable/stdlib/codec"
)

func cols(pairs ...string) *value.List {
	var out []value.Value
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, value.Tuple{pairs[i], pairs[i+1]})
	}
	return value.FromSlice(out)
}

// TestStoreSchema creates, migrates and reads a Store table on both
// drivers: the DDL of each column kind and flag, the columns added by a
// second migrate, a boolean and a JSON column round-tripping through
// Store_rowValues and selectRaw, and a bad name refused.
func TestStoreSchema(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *sqldb.DB) {
		db := ToValue(d)
		first := cols("id", "int!", "name", "text|u", "active", "bool|dbool=true", "tags", "json", "note", "text?|dtext=it's")
		applied := must(t, call(t, "Store_migrate", db, "gadgets", first, "id"))
		want := map[string]string{
			"sqlite":   `["CREATE TABLE IF NOT EXISTS gadgets (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, active INTEGER DEFAULT 1, tags TEXT, note TEXT DEFAULT 'it''s')"]`,
			"postgres": `["CREATE TABLE IF NOT EXISTS gadgets (id BIGSERIAL PRIMARY KEY, name TEXT UNIQUE, active BOOLEAN DEFAULT TRUE, tags TEXT, note TEXT DEFAULT 'it''s')"]`,
		}[driver]
		if got := value.Show(applied); got != want {
			t.Errorf("first migrate:\n got %s\nwant %s", got, want)
		}
		more := cols("id", "int!", "name", "text|u", "active", "bool|dbool=true", "tags", "json", "note", "text?|dtext=it's", "price", "real")
		if got := value.Show(must(t, call(t, "Store_migrate", db, "gadgets", more, "id"))); !strings.Contains(got, "ALTER TABLE gadgets ADD COLUMN price") {
			t.Errorf("second migrate: %s", got)
		}
		if got := value.Show(must(t, call(t, "Store_migrate", db, "gadgets", more, "id"))); got != "[]" {
			t.Errorf("third migrate: %s", got)
		}

		witness := value.NewRecord(map[string]value.Value{"name": "", "active": false, "tags": value.FromSlice([]value.Value{""})})
		c, err := skycodec.Auto(witness)
		if err != nil {
			t.Fatal(err)
		}
		row := value.NewRecord(map[string]value.Value{"name": "lamp", "active": true, "tags": value.FromSlice([]value.Value{"desk", "led"})})
		vals := call(t, "Store_rowValues", skycodec.ToValue(c), row)
		if got := value.Show(vals); got != `[("active",SqlBool True),("name",SqlString "lamp"),("tags",SqlString "[\"desk\",\"led\"]")]` {
			t.Errorf("rowValues: %s", got)
		}
		var args []value.Value
		for _, v := range vals.(*value.List).Slice() {
			args = append(args, v.(value.Tuple)[1])
		}
		must(t, call(t, "Db_exec", db, "INSERT INTO gadgets (active, name, tags) VALUES (?, ?, ?)", params(args...)))
		got := must(t, call(t, "Store_selectRaw", db, skycodec.ToValue(c), "SELECT active, name, tags FROM gadgets", params()))
		if value.Show(got) != `[{ active = True, name = "lamp", tags = ["desk","led"] }]` {
			t.Errorf("read back: %s", value.Show(got))
		}

		_, err = run(context.Background(), t, call(t, "Store_create", db, "bad name", cols("id", "text"), "id"))
		if e := task.As(err); e.Kind != task.InvalidInput || !strings.Contains(e.Message, `"bad name"`) {
			t.Errorf("a bad table name: %v", err)
		}
	})
}

// TestStoreReservedColumnNames: a column named after a reserved word (a
// field `order`, `user` or `on`) is quoted in the DDL, so both drivers
// create and extend the table; ordinary names stay bare.
func TestStoreReservedColumnNames(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *sqldb.DB) {
		db := ToValue(d)
		first := cols("id", "text", "order", "int", "user", "text")
		applied := value.Show(must(t, call(t, "Store_migrate", db, "reserved_cols", first, "id")))
		if !strings.Contains(applied, `(id TEXT PRIMARY KEY NOT NULL, \"order\" `) || !strings.Contains(applied, `\"user\" TEXT)`) {
			t.Errorf("first migrate: %s", applied)
		}
		more := cols("id", "text", "order", "int", "user", "text", "on", "bool")
		if got := value.Show(must(t, call(t, "Store_migrate", db, "reserved_cols", more, "id"))); !strings.Contains(got, `ADD COLUMN \"on\" `) {
			t.Errorf("second migrate: %s", got)
		}
		must(t, call(t, "Db_exec", db, `INSERT INTO reserved_cols (id, "order", "user", "on") VALUES (?, ?, ?, ?)`, params(value.Ctor{Name: "SqlString", Args: []value.Value{"r1"}}, value.Ctor{Name: "SqlInt", Args: []value.Value{int64(2)}}, value.Ctor{Name: "SqlString", Args: []value.Value{"ada"}}, value.Ctor{Name: "SqlBool", Args: []value.Value{true}})))
	})
	if got := sqlIdent("Order"); got != `"Order"` {
		t.Errorf(`sqlIdent("Order") = %s`, got)
	}
	if got := sqlIdent("order_id"); got != "order_id" {
		t.Errorf(`sqlIdent("order_id") = %s`, got)
	}
}
