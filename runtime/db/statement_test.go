package db

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLexStatementPostgres(t *testing.T) {
	cases := []struct {
		name, in, want string
		params         int
	}{
		{"plain", "SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = $1 AND b = $2", 2},
		{"none", "SELECT 1", "SELECT 1", 0},
		{"single quoted", "SELECT '?', ? FROM t", "SELECT '?', $1 FROM t", 1},
		{"doubled quote", "SELECT 'it''s ?', ?", "SELECT 'it''s ?', $1", 1},
		{"escape string", `SELECT E'\' ?', ?`, `SELECT E'\' ?', $1`, 1},
		{"backslash in standard string", `SELECT 'a\', ?`, `SELECT 'a\', $1`, 1},
		{"double quoted ident", `SELECT "col?" FROM t WHERE x = ?`, `SELECT "col?" FROM t WHERE x = $1`, 1},
		{"line comment", "SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2", 2},
		{"block comment", "SELECT /* ? */ ?", "SELECT /* ? */ $1", 1},
		{"nested block comment", "SELECT /* a /* ? */ ? */ ?", "SELECT /* a /* ? */ ? */ $1", 1},
		{"dollar quote", "DO $$ BEGIN PERFORM '?'; END $$; SELECT ?", "DO $$ BEGIN PERFORM '?'; END $$; SELECT $1", 1},
		{"tagged dollar quote", "SELECT $fn$ ? $$ ? $fn$, ?", "SELECT $fn$ ? $$ ? $fn$, $1", 1},
		{"positional dollar is not a quote", "SELECT $1, ?", "SELECT $1, $1", 1},
		{"dollar inside identifier", "SELECT a$b, ?", "SELECT a$b, $1", 1},
		{"ten params", "VALUES (?,?,?,?,?,?,?,?,?,?)", "VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)", 10},
		{"unterminated string", "SELECT '?", "SELECT '?", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := lexStatement(Postgres, c.in)
			if st.text != c.want || st.params != c.params {
				t.Errorf("lex(%q) = %q, %d params; want %q, %d", c.in, st.text, st.params, c.want, c.params)
			}
		})
	}
}

func TestLexStatementSQLite(t *testing.T) {
	cases := []struct {
		name, in string
		params   int
		writes   bool
	}{
		{"select", "SELECT * FROM t WHERE a = ?", 1, false},
		{"select with lowercase", "  select a from t", 0, false},
		{"leading comment", "/* x */ -- y\nSELECT 1", 0, false},
		{"insert", "INSERT INTO t VALUES (?, '?')", 1, true},
		{"update", "update t set a = ?", 1, true},
		{"delete", "DELETE FROM t", 0, true},
		{"replace", "REPLACE INTO t VALUES (1)", 0, true},
		{"create", "CREATE TABLE t (a INT)", 0, true},
		{"pragma", "PRAGMA user_version = 3", 0, true},
		{"cte insert", "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", 0, true},
		{"returning", "UPDATE t SET a = 1 RETURNING a", 0, true},
		{"keyword in string", "SELECT 'DELETE ?' FROM t", 0, false},
		{"keyword in identifier", `SELECT "update", [delete], ` + "`insert`" + `, updated_at FROM t`, 0, false},
		{"values", "VALUES (?)", 1, false},
		{"bracket ident with ?", "SELECT [a?] FROM t WHERE b = ?", 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := lexStatement(SQLite, c.in)
			if st.params != c.params || st.writes != c.writes || st.text != c.in {
				t.Errorf("lex(%q) = {params %d, writes %v, text %q}; want {%d, %v, unchanged}",
					c.in, st.params, st.writes, st.text, c.params, c.writes)
			}
		})
	}
}

func TestParseStatementCaches(t *testing.T) {
	a := parseStatement(Postgres, "SELECT ? /* cache */")
	b := parseStatement(Postgres, "SELECT ? /* cache */")
	if a != b {
		t.Error("the same SQL was parsed twice; want one cached parse")
	}
	if diff := cmp.Diff("SELECT $1 /* cache */", a.text); diff != "" {
		t.Errorf("cached rewrite (-want +got):\n%s", diff)
	}
	if c := parseStatement(SQLite, "SELECT ? /* cache */"); c.text != "SELECT ? /* cache */" {
		t.Errorf("SQLite shares PostgreSQL's rewrite: %q", c.text)
	}
}
