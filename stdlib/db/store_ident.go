package db

import "strings"

// sqlIdent is a Store column name as written into SQL: double-quoted when it
// is a reserved word of SQLite or PostgreSQL (a field named `on`, `order`,
// `user` or `group`), bare otherwise, so the SQL of ordinary names reads as
// before. Names reaching here passed checkSQLName (letters, digits, `_`), so
// quoting needs no escaping. A quoted lower-case name is the same column as
// the bare one on both databases.
func sqlIdent(name string) string {
	if reservedWords[strings.ToLower(name)] {
		return `"` + name + `"`
	}
	return name
}

// reservedWords are the SQL keywords SQLite (sqlite.org/lang_keywords.html)
// or PostgreSQL (its reserved and "requires AS" words) refuse as a bare
// column name somewhere in the statements a Store writes.
var reservedWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		abort action add after all alter always analyze and any array as asc
		asymmetric attach autoincrement before begin between both by cascade case
		cast check collate column commit conflict constraint create cross current
		current_catalog current_date current_role current_time current_timestamp
		current_user database default deferrable deferred delete desc detach
		distinct do drop each else end escape except exclude exclusive exists
		explain fail fetch filter first following for foreign from full generated
		glob grant group groups having if ignore immediate in index indexed
		initially inner insert instead intersect into is isnull join key last
		lateral leading left like limit localtime localtimestamp match
		materialized natural no not nothing notnull null nulls of offset on only
		or order others outer over partition placing plan pragma preceding
		primary query raise range recursive references regexp reindex release
		rename replace restrict returning right rollback row rows savepoint
		select session_user set some symmetric table temp temporary then ties to
		trailing transaction trigger true false unbounded union unique update user
		using vacuum values variadic view virtual when where window with without`) {
		m[w] = true
	}
	return m
}()
