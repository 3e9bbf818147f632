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

// sqliteUserTables lists the tables a workflow or a script created.
const sqliteUserTables = `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\_sky\_%' ESCAPE '\' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`

// snapshot reads every user table of d (a Harness's SQLite database).
func snapshot(ctx context.Context, d *db.DB) (tables, error) {
	names, err := d.QueryMaps(ctx, sqliteUserTables)
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

// diff describes the first difference of got from want (the crash-free
// run's), or "" when they are equal.
func (want tables) diff(got tables) string {
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
			return fmt.Sprintf("table %s has %d rows, the crash-free run has %d%s", n, len(g), len(w), firstExtra(w, g))
		}
		return fmt.Sprintf("table %s differs%s", n, firstExtra(w, g))
	}
	return ""
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
