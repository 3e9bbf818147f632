package db

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sqldb "skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skycodec "skydurable/stdlib/codec"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var kernels = Kernels()

func call(t *testing.T, name string, args ...value.Value) value.Value {
	t.Helper()
	k := kernels[name]
	if k.Arity != len(args) {
		t.Fatalf("%s takes %d arguments, not %d", name, k.Arity, len(args))
	}
	v, err := k.Fn(args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// run forces a Sky Task value under ctx.
func run(ctx context.Context, t *testing.T, v value.Value) (value.Value, error) {
	t.Helper()
	tk, ok := v.(value.Task)
	if !ok {
		t.Fatalf("want a Task, got %s", value.Show(v))
	}
	return task.Run(ctx, tk.T)
}

func must(t *testing.T, v value.Value) value.Value {
	t.Helper()
	r, err := run(context.Background(), t, v)
	if err != nil {
		t.Fatalf("task failed: %v", err)
	}
	return r
}

func sqlStr(s string) value.Value { return value.Ctor{Name: "SqlString", Args: []value.Value{s}} }
func sqlInt(i int64) value.Value  { return value.Ctor{Name: "SqlInt", Args: []value.Value{i}} }
func sqlBool(b bool) value.Value  { return value.Ctor{Name: "SqlBool", Args: []value.Value{b}} }

var sqlNull value.Value = value.Ctor{Name: "SqlNull"}

func params(vs ...value.Value) *value.List { return value.FromSlice(vs) }

const schema = `CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, age INTEGER, score REAL, active BOOLEAN, nick TEXT);`

func setup(t *testing.T, d *sqldb.DB) value.Value {
	t.Helper()
	db := ToValue(d)
	must(t, call(t, "Db_execRaw", db, schema))
	for _, row := range [][]value.Value{
		{sqlInt(1), sqlStr("Ada"), sqlInt(36), value.Ctor{Name: "SqlFloat", Args: []value.Value{1.5}}, sqlBool(true), sqlNull},
		{sqlInt(2), sqlStr("Bob"), sqlInt(17), value.Ctor{Name: "SqlFloat", Args: []value.Value{int64(2)}}, sqlBool(false), sqlStr("bobby")},
	} {
		n := must(t, call(t, "Db_exec", db, "INSERT INTO users (id, name, age, score, active, nick) VALUES (?, ?, ?, ?, ?, ?)", params(row...)))
		if n != int64(1) {
			t.Fatalf("insert affected %v rows", n)
		}
	}
	return db
}

func TestExecAndQuery(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *sqldb.DB) {
		db := setup(t, d)
		rows := must(t, call(t, "Db_query", db, "SELECT name, age, nick FROM users WHERE age > ? ORDER BY id", params(sqlInt(10))))
		want := `[Dict.fromList [("age","36"),("name","Ada"),("nick","")],Dict.fromList [("age","17"),("name","Bob"),("nick","bobby")]]`
		if got := value.Show(rows); got != want {
			t.Errorf("query rows\n got %s\nwant %s", got, want)
		}
		n := must(t, call(t, "Db_exec", db, "UPDATE users SET age = age + 1", params()))
		if n != int64(2) {
			t.Errorf("update affected %v rows, want 2", n)
		}
	})
}

func TestErrorsReachSkyAsErrorValues(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *sqldb.DB) {
		db := setup(t, d)
		_, err := run(context.Background(), t, call(t, "Db_exec", db, "INSERT INTO users (id, name) VALUES (?, ?)", params(sqlInt(3), sqlStr("Ada"))))
		sky := value.Show(value.FromError(err))
		if !strings.HasPrefix(sky, "Error Conflict ") {
			t.Errorf("a duplicate name: want a Conflict Error, got %s", sky)
		}
		_, err = run(context.Background(), t, call(t, "Db_query", db, "SELECT nope FROM users", params()))
		if e := task.As(err); e.Kind != task.InvalidInput || !strings.Contains(e.Message, "nope") {
			t.Errorf("a bad column: want InvalidInput naming it, got %v", err)
		}
	})
	// Plain values are parameters too (real Sky's `List String`); a record is not.
	if _, err := kernels["Db_exec"].Fn([]value.Value{ToValue(nil), "SELECT 1", params(int64(3), value.Unit{})}); err == nil || !strings.Contains(err.Error(), "parameter 2 is (), which is not a SQL value") {
		t.Errorf("a () parameter: got %v", err)
	}
}

func TestWithTransaction(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *sqldb.DB) {
		db := setup(t, d)
		insert := func(id int64, name string) value.Func {
			return value.NewFunc("body", 1, func(a []value.Value) (value.Value, error) {
				return kernels["Db_exec"].Fn([]value.Value{a[0], "INSERT INTO users (id, name) VALUES (?, ?)", params(sqlInt(id), sqlStr(name))})
			})
		}
		failing := value.NewFunc("body", 1, func(a []value.Value) (value.Value, error) {
			ins, _ := kernels["Db_exec"].Fn([]value.Value{a[0], "INSERT INTO users (id, name) VALUES (?, ?)", params(sqlInt(4), sqlStr("Dee"))})
			return value.Task{T: task.AndThen(ins.(value.Task).T, func(value.Value) task.Task[value.Value] {
				return task.Fail[value.Value](task.New(task.InvalidInput, "changed my mind"))
			})}, nil
		})
		if v := must(t, call(t, "Db_withTransaction", db, insert(3, "Cy"))); v != int64(1) {
			t.Errorf("withTransaction result %v, want 1", v)
		}
		_, err := run(context.Background(), t, call(t, "Db_withTransaction", db, failing))
		if e := task.As(err); e.Kind != task.InvalidInput || e.Message != "changed my mind" {
			t.Errorf("failing transaction: got %v", err)
		}
		names := value.Show(must(t, call(t, "Db_query", db, "SELECT name FROM users ORDER BY id", params())))
		if names != `[Dict.fromList [("name","Ada")],Dict.fromList [("name","Bob")],Dict.fromList [("name","Cy")]]` {
			t.Errorf("after one committed and one rolled-back transaction: %s", names)
		}
	})
}

// A durable step runs the user's statements under a context carrying a lazy
// transaction: the kernels must use the Task's context so they join it.
func TestAmbientTransactionReachesKernels(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *sqldb.DB) {
		db := setup(t, d)
		ctx, lazy := sqldb.WithLazyTx(context.Background(), d)
		if _, err := run(ctx, t, call(t, "Db_exec", db, "DELETE FROM users", params())); err != nil {
			t.Fatal(err)
		}
		if !lazy.Started() {
			t.Fatal("Db.exec under an ambient transaction did not join it")
		}
		if err := lazy.Rollback(context.Background()); err != nil {
			t.Fatal(err)
		}
		rows := must(t, call(t, "Db_query", db, "SELECT id FROM users", params()))
		if n := rows.(*value.List).Len(); n != 2 {
			t.Errorf("after rolling back the ambient transaction %d rows remain, want 2", n)
		}
	})
}

func TestStoreSelectRaw(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *sqldb.DB) {
		db := setup(t, d)
		witness := value.NewRecord(map[string]value.Value{
			"name": "", "age": int64(0), "score": 0.0, "active": false, "nick": value.Just(""), "label": "none",
		})
		c, err := skycodec.Auto(witness)
		if err != nil {
			t.Fatal(err)
		}
		rows := must(t, call(t, "Store_selectRaw", db, skycodec.ToValue(c),
			"SELECT name, age, score, active, nick, CAST(age AS TEXT) AS label FROM users ORDER BY id", params()))
		want := `[{ active = True, age = 36, label = "36", name = "Ada", nick = Nothing, score = 1.5 },{ active = False, age = 17, label = "17", name = "Bob", nick = Just "bobby", score = 2 }]`
		if got := value.Show(rows); got != want {
			t.Errorf("selectRaw\n got %s\nwant %s", got, want)
		}
		// A TEXT column holding a number feeds an Int field.
		ageOnly, _ := skycodec.Auto(value.NewRecord(map[string]value.Value{"age": int64(0)}))
		rows = must(t, call(t, "Store_selectRaw", db, skycodec.ToValue(ageOnly), "SELECT CAST(age AS TEXT) AS age FROM users WHERE id = ?", params(sqlInt(1))))
		if got := value.Show(rows); got != "[{ age = 36 }]" {
			t.Errorf("text to Int: %s", got)
		}
		_, err = run(context.Background(), t, call(t, "Store_selectRaw", db, skycodec.ToValue(ageOnly), "SELECT name AS age FROM users ORDER BY id", params()))
		if e := task.As(err); e.Kind != task.Decode || !strings.HasPrefix(e.Message, `$[0].age: expected an integer, found "Ada"`) {
			t.Errorf("an undecodable row: got %v", err)
		}
		// The error names the column no reading fits, not one that needed
		// its second reading first (active: 0 on SQLite, then False).
		activeAge, _ := skycodec.Auto(value.NewRecord(map[string]value.Value{"active": false, "age": int64(0)}))
		_, err = run(context.Background(), t, call(t, "Store_selectRaw", db, skycodec.ToValue(activeAge),
			"SELECT active, name AS age FROM users WHERE id = 2", params()))
		if e := task.As(err); e.Kind != task.Decode || !strings.HasPrefix(e.Message, `$[0].age: expected an integer, found "Bob"`) {
			t.Errorf("a row with a boolean read as its second reading and an undecodable column: got %v", err)
		}
	})
}

func TestConnect(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "app.db")
	env := Env{Getenv: func(k string) string {
		return map[string]string{"SKY_DB_DRIVER": "sqlite", "SKY_DB_PATH": path}[k]
	}, Dir: dir}
	ks := KernelsWith(env)
	connect, _ := ks["Db_connect"].Fn([]value.Value{value.Unit{}})
	a, err := run(context.Background(), t, connect)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := run(context.Background(), t, connect)
	da, _ := FromValue(a)
	db2, _ := FromValue(b)
	if da != db2 {
		t.Error("two Db.connect calls with the same settings opened two pools")
	}
	t.Cleanup(func() { da.Close() })
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the SQLite file was not created at SKY_DB_PATH: %v", err)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	toml := "name = \"app\" # the app\ndeps = [\n  \"a\",\n  \"b\",\n]\n\n[database]\ndriver = \"sqlite\"\npath = \"db/x.db\"  # comment\n\n[source]\nroot = \"src\"\n"
	if err := os.WriteFile(filepath.Join(dir, "sky.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	cases := []struct {
		name string
		dir  string
		env  map[string]string
		want Config
		err  string
	}{
		{"default", empty, nil, Config{Driver: "sqlite", DSN: filepath.Join(empty, ".skydata/app.db")}, ""},
		{"sky.toml (its path is relative to the project root)", dir, nil, Config{Driver: "sqlite", DSN: filepath.Join(dir, "db/x.db")}, ""},
		{"DATABASE_URL over sky.toml", dir, map[string]string{"DATABASE_URL": "postgres://h/db"}, Config{Driver: "postgres", DSN: "postgres://h/db"}, ""},
		{"SKY_DB_DRIVER over DATABASE_URL", dir, map[string]string{"DATABASE_URL": "postgres://h/db", "SKY_DB_DRIVER": "sqlite"}, Config{Driver: "sqlite", DSN: filepath.Join(dir, ".skydata/app.db")}, ""},
		{"SKY_DB_PATH", dir, map[string]string{"SKY_DB_PATH": "other.db"}, Config{Driver: "sqlite", DSN: "other.db"}, ""},
		{"postgres driver takes DATABASE_URL", empty, map[string]string{"SKY_DB_DRIVER": "postgresql", "DATABASE_URL": "postgres://u"}, Config{Driver: "postgres", DSN: "postgres://u"}, ""},
		{"SKY_DB_POOLER", empty, map[string]string{"DATABASE_URL": "postgres://u", "SKY_DB_POOLER": "Transaction"}, Config{Driver: "postgres", DSN: "postgres://u", Pooler: "transaction"}, ""},
		{"bad SKY_DB_POOLER", empty, map[string]string{"DATABASE_URL": "postgres://u", "SKY_DB_POOLER": "statement"}, Config{}, `SKY_DB_POOLER="statement"`},
		{"postgres without URL", empty, map[string]string{"SKY_DB_DRIVER": "postgres"}, Config{}, "no URL is set"},
	}
	for _, c := range cases {
		got, err := Resolve(Env{Getenv: func(k string) string { return c.env[k] }, Dir: c.dir})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: want an error containing %q, got %v", c.name, c.err, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}
