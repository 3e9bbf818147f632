package store

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// NamespaceSep separates a namespace from the name it scopes in every id and
// name the engine stores for a namespace other than the default one: run
// "r1" of namespace "billing" is stored as "billing" + NamespaceSep + "r1",
// its workflow "checkout" as "billing" + NamespaceSep + "checkout". The
// engine refuses control characters in every name it is given, so the
// separator is unambiguous; the default namespace's names carry no prefix
// (a database written before namespaces is the default namespace).
const NamespaceSep = "\x1f"

// Scope selects one namespace's rows by an id column; the zero Scope selects
// every row.
type Scope struct {
	// On restricts the rows to a namespace: those whose id begins with
	// Prefix or, when Prefix is "" (the default namespace), whose id holds
	// no NamespaceSep.
	On     bool
	Prefix string
}

// The conditions that keep a Scope's rows, by the id column they test (id;
// r.id; s.run_id), with their parameters in Scope.Args: one statement text
// for every scope (the zero Scope included), so a statement table holds one
// statement per shape. Each filters the rows an index walk reads; it
// selects no index.
const (
	ScopeID      = "(? = 0 OR CASE WHEN ? = 0 THEN id NOT LIKE ? ELSE substr(id, 1, ?) = ? END)"
	ScopeRunsID  = "(? = 0 OR CASE WHEN ? = 0 THEN r.id NOT LIKE ? ELSE substr(r.id, 1, ?) = ? END)"
	ScopeSignals = "(? = 0 OR CASE WHEN ? = 0 THEN s.run_id NOT LIKE ? ELSE substr(s.run_id, 1, ?) = ? END)"
)

// Args are the parameters of ScopeID, ScopeRunsID and ScopeSignals.
func (s Scope) Args() []any {
	on, n := 0, utf8.RuneCountInString(s.Prefix)
	if s.On {
		on = 1
	}
	return []any{on, n, "%" + NamespaceSep + "%", n, s.Prefix}
}

// WorkflowNamesSQL lists the distinct workflow names of the runs, in order,
// the same on every dialect: a recursive walk that probes the workflow
// index once per name for the next one (min over a range of its first
// column), so it costs one probe per workflow, not one row per run.
const WorkflowNamesSQL = `
WITH RECURSIVE w(name) AS (
  SELECT min(workflow) FROM _sky_durable_runs
  UNION ALL
  SELECT (SELECT min(r.workflow) FROM _sky_durable_runs r WHERE r.workflow > w.name) FROM w WHERE w.name IS NOT NULL)
SELECT name FROM w WHERE name IS NOT NULL`

// NamespacesOf are the namespaces of workflow names (WorkflowNames), sorted:
// the part of a name before NamespaceSep, or def for a name without one.
func NamespacesOf(workflows []string, def string) []string {
	var out []string
	for _, w := range workflows {
		ns, _, found := strings.Cut(w, NamespaceSep)
		if !found {
			ns = def
		}
		out = append(out, ns)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
