package durabletest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"skydurable/runtime/db"
)

// tables is the content of a Harness's user tables (every table but the
// engine's _sky_* tables), each as its rows rendered and sorted, so two
// snapshots compare whatever order the rows came in.
type tables map[string][]string

// userTables lists the tables a workflow or a script created, by dialect.
var userTables = map[db.Dialect]string{
	db.SQLite:   `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\_sky\_%' ESCAPE '\' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`,
	db.Postgres: `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name NOT LIKE '\_sky\_%' ORDER BY table_name`,
}

// snapshot reads every user table of d (a Harness's database).
func snapshot(ctx context.Context, d *db.DB) (tables, error) {
	names, err := d.QueryMaps(ctx, userTables[d.Dialect()])
	if err != nil {
		return nil, err
	}
	out := tables{}
	for _, n := range names {
		name := n["name"]
		rows, err := d.QueryMaps(ctx, `SELECT * FROM "`+strings.ReplaceAll(name, `"`, `""`)+`"`)
		if err != nil {
			return nil, err
		}
		rendered := make([]string, len(rows))
		for i, r := range rows {
			rendered[i] = renderRow(r)
		}
		sort.Strings(rendered)
		out[name] = rendered
	}
	return out, nil
}

func renderRow(r map[string]string) string {
	cols := make([]string, 0, len(r))
	for c := range r {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = fmt.Sprintf("%s=%q", c, r[c])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// tableDiff is the first difference of two snapshots: the table and how.
type tableDiff struct{ table, text string }

// diff describes the first difference of got from want (the crash-free
// run's), or nil when they are equal.
func (want tables) diff(got tables) *tableDiff {
	names := make([]string, 0, len(want)+len(got))
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		w, g := want[n], got[n]
		if slices.Equal(w, g) {
			continue
		}
		if len(w) != len(g) {
			return &tableDiff{n, fmt.Sprintf("table %s has %d rows, the crash-free run has %d%s", n, len(g), len(w), firstExtra(w, g))}
		}
		return &tableDiff{n, fmt.Sprintf("table %s differs%s", n, firstExtra(w, g))}
	}
	return nil
}

// firstExtra names a row of got that want lacks (a row counted twice
// counts), or "".
func firstExtra(want, got []string) string {
	left := map[string]int{}
	for _, r := range want {
		left[r]++
	}
	for _, r := range got {
		if left[r] == 0 {
			return "; row " + r + " is not in the crash-free run"
		}
		left[r]--
	}
	return ""
}
