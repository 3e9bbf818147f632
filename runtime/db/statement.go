package db

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// statement is a caller's SQL as the driver needs it: placeholders
// rewritten for PostgreSQL, counted, and (for SQLite) classified as a write.
type statement struct {
	text    string
	params  int
	writes  bool
	reshape bool // has ALTER or DROP: may change the shape of cached statements
}

type statementKey struct {
	dialect Dialect
	sql     string
}

// The cache is bounded so programs that build SQL dynamically cannot grow it
// without limit; statements past the bound are parsed on each call.
const (
	maxCachedStatements = 10000
	maxCachedSQLLength  = 8192
)

var (
	statementCache sync.Map // statementKey -> *statement
	statementCount atomic.Int64
)

// parseStatement returns the cached parse of sql, parsing it on first use.
func parseStatement(d Dialect, sql string) *statement {
	key := statementKey{d, sql}
	if v, ok := statementCache.Load(key); ok {
		return v.(*statement)
	}
	st := lexStatement(d, sql)
	if len(sql) <= maxCachedSQLLength && statementCount.Load() < maxCachedStatements {
		if _, loaded := statementCache.LoadOrStore(key, st); !loaded {
			statementCount.Add(1)
		}
	}
	return st
}

// Keywords that make a SELECT/WITH statement a write on SQLite.
var writeKeywords = map[string]bool{
	"INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true, "RETURNING": true,
}

// Leading keywords of statements that only read.
var readLeaders = map[string]bool{"SELECT": true, "WITH": true, "VALUES": true, "EXPLAIN": true}

// lexStatement walks sql once, skipping quoted text and comments, counting
// and (for PostgreSQL) numbering `?` placeholders, and noting keywords.
func lexStatement(d Dialect, sql string) *statement {
	var out strings.Builder
	out.Grow(len(sql) + 8)
	st := &statement{}
	first := ""
	sawWrite := false
	n := len(sql)
	for i := 0; i < n; {
		c := sql[i]
		switch {
		case c == '\'':
			escapes := d == Postgres && i > 0 && (sql[i-1] == 'E' || sql[i-1] == 'e') && (i < 2 || !isIdentChar(sql[i-2]))
			j := skipQuoted(sql, i, '\'', escapes)
			out.WriteString(sql[i:j])
			i = j
		case c == '"' || (d == SQLite && c == '`'):
			j := skipQuoted(sql, i, c, false)
			out.WriteString(sql[i:j])
			i = j
		case d == SQLite && c == '[':
			j := strings.IndexByte(sql[i:], ']')
			if j < 0 {
				j = n
			} else {
				j += i + 1
			}
			out.WriteString(sql[i:j])
			i = j
		case c == '-' && i+1 < n && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				j = n
			} else {
				j += i + 1
			}
			out.WriteString(sql[i:j])
			i = j
		case c == '/' && i+1 < n && sql[i+1] == '*':
			j := skipBlockComment(sql, i, d == Postgres)
			out.WriteString(sql[i:j])
			i = j
		case d == Postgres && c == '$' && (i == 0 || !isIdentChar(sql[i-1])):
			j := skipDollarQuoted(sql, i)
			out.WriteString(sql[i:j])
			i = j
		case c == '?':
			st.params++
			if d == Postgres {
				out.WriteByte('$')
				out.WriteString(strconv.Itoa(st.params))
			} else {
				out.WriteByte('?')
			}
			i++
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentChar(sql[j]) {
				j++
			}
			word := strings.ToUpper(sql[i:j])
			if first == "" {
				first = word
			}
			if writeKeywords[word] {
				sawWrite = true
			}
			if word == "ALTER" || word == "DROP" {
				st.reshape = true
			}
			out.WriteString(sql[i:j])
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	st.text = out.String()
	st.writes = !readLeaders[first] || sawWrite
	return st
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$'
}

// skipQuoted returns the index just past the quoted run starting at i; a
// doubled quote is an escaped quote, and with backslash escapes (PostgreSQL
// E'...') a backslash escapes the next byte. An unterminated run ends at len.
func skipQuoted(s string, i int, q byte, backslash bool) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if backslash {
				j++
			}
		case q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// skipBlockComment returns the index just past the /* */ comment at i;
// PostgreSQL comments nest, SQLite ones do not.
func skipBlockComment(s string, i int, nested bool) int {
	depth := 0
	for j := i; j+1 < len(s); {
		switch {
		case s[j] == '/' && s[j+1] == '*':
			if depth == 0 || nested {
				depth++
			}
			j += 2
		case s[j] == '*' && s[j+1] == '/':
			depth--
			j += 2
			if depth == 0 {
				return j
			}
		default:
			j++
		}
	}
	return len(s)
}

// skipDollarQuoted returns the index past the $tag$...$tag$ body at i, or
// i+1 when the `$` does not open one (a positional $1, say).
func skipDollarQuoted(s string, i int) int {
	j := i + 1
	for j < len(s) && s[j] != '$' {
		c := s[j]
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80 || (j > i+1 && c >= '0' && c <= '9')) {
			return i + 1
		}
		j++
	}
	if j >= len(s) {
		return i + 1
	}
	tag := s[i : j+1]
	end := strings.Index(s[j+1:], tag)
	if end < 0 {
		return len(s)
	}
	return j + 1 + end + len(tag)
}
