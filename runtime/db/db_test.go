package db_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// mustExec runs a statement or fails the test.
func mustExec(t *testing.T, d *db.DB, sql string, args ...any) int64 {
	t.Helper()
	n, err := d.Exec(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("Exec(%q): %v", sql, err)
	}
	return n
}

// kindOf asserts err is a *task.Error and returns its kind.
func kindOf(t *testing.T, err error) task.Kind {
	t.Helper()
	var te *task.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not a *task.Error", err, err)
	}
	return te.Kind
}

// timeColumn is a column type that holds a time on each dialect.
func timeColumn(d *db.DB) string {
	if d.Dialect() == db.Postgres {
		return "TIMESTAMPTZ"
	}
	return "TEXT"
}

func TestPlaceholdersInsideQuotesSurviveRoundTrip(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, `CREATE TABLE q ("what?" TEXT, b TEXT)`)
		mustExec(t, d, `INSERT INTO q ("what?", b) VALUES ('lit?', ?) -- trailing ? comment`, "arg")
		mustExec(t, d, `INSERT INTO q ("what?", b) /* ? */ VALUES (?, 'it''s ?')`, "arg2")
		got, err := d.QueryMaps(ctx, `SELECT "what?" AS w, b FROM q WHERE b <> ? ORDER BY w`, "none?")
		if err != nil {
			t.Fatal(err)
		}
		want := []map[string]string{{"w": "arg2", "b": "it's ?"}, {"w": "lit?", "b": "arg"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
		if driver == "postgres" {
			var s string
			if err := d.QueryRow(ctx, "SELECT $tag$ ? $tag$ || ?", "x").Scan(&s); err != nil || s != " ? x" {
				t.Errorf("dollar-quoted: got %q, %v; want %q", s, err, " ? x")
			}
		}
	})
}

func TestArgumentAndScanTypesRoundTrip(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE v (id INTEGER PRIMARY KEY, s TEXT, i BIGINT, f DOUBLE PRECISION, b BOOLEAN, at "+
			timeColumn(d)+", raw "+map[string]string{"sqlite": "BLOB", "postgres": "BYTEA"}[driver]+")")
		at := time.Date(2026, 3, 4, 5, 6, 7, 891011000, time.FixedZone("X", 3600))
		mustExec(t, d, "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?)", 1, "héllo", int64(1)<<40, 2.5, true, at, []byte{0, 1, 255})
		mustExec(t, d, "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?)", int64(2), nil, nil, nil, nil, nil, nil)

		var (
			s   string
			i   int64
			n   int
			f   float64
			b   bool
			tm  time.Time
			raw []byte
		)
		if err := d.QueryRow(ctx, "SELECT s, i, i, f, b, at, raw FROM v WHERE id = ?", 1).Scan(&s, &i, &n, &f, &b, &tm, &raw); err != nil {
			t.Fatal(err)
		}
		if s != "héllo" || i != 1<<40 || n != 1<<40 || f != 2.5 || !b || !tm.Equal(at) || tm.Location() != time.UTC || !cmp.Equal(raw, []byte{0, 1, 255}) {
			t.Errorf("got s=%q i=%d n=%d f=%v b=%v at=%v raw=%v; want héllo, 2^40, 2^40, 2.5, true, %v (UTC), [0 1 255]",
				s, i, n, f, b, tm, raw, at.UTC())
		}

		var (
			ps  *string
			pi  *int64
			pn  *int
			pf  *float64
			pb  *bool
			pt  *time.Time
			any any
		)
		if err := d.QueryRow(ctx, "SELECT s, i, i, f, b, at, raw FROM v WHERE id = ?", 2).Scan(&ps, &pi, &pn, &pf, &pb, &pt, &any); err != nil {
			t.Fatal(err)
		}
		if ps != nil || pi != nil || pn != nil || pf != nil || pb != nil || pt != nil || any != nil {
			t.Errorf("NULLs scanned as %v %v %v %v %v %v %v; want all nil", ps, pi, pn, pf, pb, pt, any)
		}
		if err := d.QueryRow(ctx, "SELECT s, at FROM v WHERE id = ?", 1).Scan(&ps, &pt); err != nil || ps == nil || *ps != "héllo" || pt == nil || !pt.Equal(at) {
			t.Errorf("non-NULL into pointer-to-pointer: %v %v %v", ps, pt, err)
		}

		// A NULL into a plain destination names the column and the fix.
		err := d.QueryRow(ctx, "SELECT s FROM v WHERE id = ?", 2).Scan(&s)
		if kindOf(t, err) != task.Decode || !contains(err.Error(), `"s"`, "**string") {
			t.Errorf("NULL into *string: %v; want a Decode error naming column \"s\" and **string", err)
		}

		// Pointer arguments: nil pointer is NULL, others are their value.
		name := "ptr"
		var nilTime *time.Time
		mustExec(t, d, "INSERT INTO v (id, s, at) VALUES (?, ?, ?)", 3, &name, nilTime)
		maps, err := d.QueryMaps(ctx, "SELECT id, s, i, f, b, at FROM v ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		want := []map[string]string{
			{"id": "1", "s": "héllo", "i": "1099511627776", "f": "2.5", "b": "1", "at": "2026-03-04T04:06:07.891011000Z"},
			{"id": "2", "s": "", "i": "", "f": "", "b": "", "at": ""},
			{"id": "3", "s": "ptr", "i": "", "f": "", "b": "", "at": ""},
		}
		if diff := cmp.Diff(want, maps); diff != "" {
			t.Errorf("QueryMaps (-want +got):\n%s", diff)
		}
		// A boolean reads "1"/"0" on both drivers, a column or an expression:
		// SQLite has no boolean type and holds one as 1/0.
		bools, err := d.QueryMaps(ctx, "SELECT b, i > 0 AS pos, i < 0 AS neg FROM v WHERE id = ?", 1)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]map[string]string{{"b": "1", "pos": "1", "neg": "0"}}, bools); diff != "" {
			t.Errorf("booleans (-want +got):\n%s", diff)
		}
		var bs string
		if err := d.QueryRow(ctx, "SELECT b FROM v WHERE id = ?", 1).Scan(&bs); err != nil || bs != "1" {
			t.Errorf("boolean into *string: %q, %v; want \"1\"", bs, err)
		}
	})
}

func TestTimesCompareInSQL(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE due (id TEXT, wake_at "+timeColumn(d)+")")
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i, off := range []time.Duration{time.Hour, time.Second, 10 * time.Minute, 999 * time.Millisecond} {
			mustExec(t, d, "INSERT INTO due VALUES (?, ?)", string(rune('a'+i)), base.Add(off))
		}
		rows, err := d.Query(ctx, "SELECT id FROM due WHERE wake_at <= ? ORDER BY wake_at", base.Add(10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"d", "b", "c"}, got); diff != "" {
			t.Errorf("due ids in wake order (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"id"}, rows.Columns()); diff != "" {
			t.Errorf("Columns (-want +got):\n%s", diff)
		}
	})
}

func TestRowsAffected(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		n, err := d.ExecRaw(ctx, "CREATE TABLE r (k INT); INSERT INTO r VALUES (1), (2), (3); INSERT INTO r VALUES (4);")
		if err != nil || n != 4 {
			t.Fatalf("ExecRaw script = %d, %v; want 4 rows", n, err)
		}
		cases := []struct {
			sql  string
			args []any
			want int64
		}{
			{"UPDATE r SET k = k + 10 WHERE k > ?", []any{1}, 3},
			{"UPDATE r SET k = 0 WHERE k = ?", []any{-5}, 0},
			{"DELETE FROM r WHERE k >= ?", []any{13}, 2},
			{"INSERT INTO r VALUES (?)", []any{7}, 1},
		}
		for _, c := range cases {
			if got := mustExec(t, d, c.sql, c.args...); got != c.want {
				t.Errorf("Exec(%q) affected %d rows, want %d", c.sql, got, c.want)
			}
		}
	})
}

func TestErrorKinds(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE e (id INT PRIMARY KEY, name TEXT NOT NULL UNIQUE, n INT CHECK (n > 0))")
		mustExec(t, d, "INSERT INTO e VALUES (?, ?, ?)", 1, "a", 1)
		cases := []struct {
			name  string
			run   func() error
			kind  task.Kind
			words []string
		}{
			{"duplicate primary key", func() error { _, err := d.Exec(ctx, "INSERT INTO e VALUES (?, ?, ?)", 1, "b", 1); return err },
				task.Conflict, []string{driver, "INSERT INTO e"}},
			{"duplicate unique", func() error { _, err := d.Exec(ctx, "INSERT INTO e VALUES (?, ?, ?)", 2, "a", 1); return err },
				task.Conflict, []string{driver}},
			{"not null", func() error { _, err := d.Exec(ctx, "INSERT INTO e VALUES (?, ?, ?)", 3, nil, 1); return err },
				task.InvalidInput, []string{driver}},
			{"check", func() error { _, err := d.Exec(ctx, "INSERT INTO e VALUES (?, ?, ?)", 4, "c", -1); return err },
				task.InvalidInput, []string{driver}},
			{"syntax", func() error { _, err := d.Exec(ctx, "INSRT INTO e VALUES (1)"); return err },
				task.InvalidInput, []string{driver, "INSRT INTO e", "syntax"}},
			{"undefined table", func() error { _, err := d.QueryMaps(ctx, "SELECT * FROM nope"); return err },
				task.InvalidInput, []string{"nope", "schema set-up"}},
			{"undefined column", func() error { _, err := d.QueryMaps(ctx, "SELECT missing_col FROM e"); return err },
				task.InvalidInput, []string{"missing_col"}},
			{"too few args", func() error { _, err := d.Exec(ctx, "UPDATE e SET name = ? WHERE id = ?", "x"); return err },
				task.InvalidInput, []string{"2 placeholder(s)", "1 argument(s)", "UPDATE e SET name"}},
			{"too many args", func() error { _, err := d.QueryMaps(ctx, "SELECT 1", 5); return err },
				task.InvalidInput, []string{"0 placeholder(s)", "1 argument(s)"}},
			{"unsupported arg type", func() error { _, err := d.Exec(ctx, "INSERT INTO e VALUES (?, ?, ?)", 9, struct{}{}, 1); return err },
				task.InvalidInput, []string{"argument 2", "struct {}"}},
			{"no rows", func() error { var s string; return d.QueryRow(ctx, "SELECT name FROM e WHERE id = ?", 99).Scan(&s) },
				task.NotFound, []string{"no row"}},
			{"deadline", func() error {
				c, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
				defer cancel()
				_, err := d.Exec(c, "INSERT INTO e VALUES (?, ?, ?)", 5, "late", 1)
				return err
			}, task.Timeout, []string{driver}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				err := c.run()
				if err == nil {
					t.Fatal("no error")
				}
				if got := kindOf(t, err); got != c.kind {
					t.Errorf("kind %v, want %v; error: %v", got, c.kind, err)
				}
				if !contains(err.Error(), c.words...) {
					t.Errorf("error %q should mention %q", err, c.words)
				}
			})
		}
		var s string
		if err := d.QueryRow(ctx, "SELECT name FROM e WHERE id = ?", 99).Scan(&s); !errors.Is(err, db.ErrNoRows) {
			t.Errorf("no-row error %v does not wrap db.ErrNoRows", err)
		}
		if err := d.QueryRow(ctx, "SELECT id FROM e WHERE id = ?", 1).Scan(&s, &s); kindOf(t, err) != task.InvalidInput {
			t.Errorf("Scan with too many destinations: %v; want InvalidInput", err)
		}
	})
}

func TestClosedDatabaseIsUnavailable(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE c (k INT)")
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("second Close: %v; want nil", err)
		}
		calls := map[string]func() error{
			"Exec":      func() error { _, err := d.Exec(ctx, "INSERT INTO c VALUES (1)"); return err },
			"Query":     func() error { _, err := d.Query(ctx, "SELECT k FROM c"); return err },
			"QueryRow":  func() error { var k int; return d.QueryRow(ctx, "SELECT k FROM c").Scan(&k) },
			"QueryMaps": func() error { _, err := d.QueryMaps(ctx, "SELECT k FROM c"); return err },
			"ExecRaw":   func() error { _, err := d.ExecRaw(ctx, "SELECT 1"); return err },
			"WithTransaction": func() error {
				return d.WithTransaction(ctx, func(context.Context, *db.DB) error { return nil })
			},
			"LazyTx": func() error { lctx, _ := db.WithLazyTx(ctx, d); _, err := d.Exec(lctx, "SELECT 1"); return err },
		}
		for name, call := range calls {
			err := call()
			if err == nil || kindOf(t, err) != task.Unavailable || !contains(err.Error(), "database is closed") {
				t.Errorf("%s after Close: %v; want Unavailable \"database is closed\"", name, err)
			}
		}
	})
}

func contains(s string, words ...string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

func TestReturningThroughQueryRow(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		mustExec(t, d, "CREATE TABLE ret (id INTEGER PRIMARY KEY, name TEXT)")
		var id int64
		var name string
		if err := d.QueryRow(ctx, "INSERT INTO ret (id, name) VALUES (?, ?) RETURNING id, name", 7, "seven").Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		if id != 7 || name != "seven" {
			t.Errorf("RETURNING gave %d %q, want 7 \"seven\"", id, name)
		}
		if n := count(t, d, "ret"); n != 1 {
			t.Errorf("%d rows after INSERT ... RETURNING, want 1", n)
		}
		rows, err := d.QueryMaps(ctx, "UPDATE ret SET name = ? WHERE id = ? RETURNING name", "VII", 7)
		if err != nil || len(rows) != 1 || rows[0]["name"] != "VII" {
			t.Errorf("UPDATE ... RETURNING via QueryMaps: %v, %v", rows, err)
		}
	})
}
