package store

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestStatusListsFollowTheMachine derives each SQL status list from the
// Machine and checks the constant the stores use.
func TestStatusListsFollowTheMachine(t *testing.T) {
	where := func(keep func(Status) bool) []Status {
		var out []Status
		for _, s := range AllStatuses {
			if keep(s) {
				out = append(out, s)
			}
		}
		return out
	}
	claimable := From(OpClaim)
	unclaimable := where(func(s Status) bool { return !slices.Contains(claimable, s) })
	cases := []struct {
		name, got string
		want      []Status
	}{
		{"SQLClaimable", SQLClaimable, claimable},
		{"SQLFree", SQLFree, where(func(s Status) bool { return slices.Contains(claimable, s) && !Accepts(OpSuspend, s) })},
		{"SQLUnclaimable", SQLUnclaimable, unclaimable},
		{"SQLEndedUnsuccessfully", SQLEndedUnsuccessfully, where(func(s Status) bool { return slices.Contains(unclaimable, s) && s != StatusDone })},
		{"SQLTerminal", SQLTerminal, where(Terminal)},
		{"SQLRetryable", SQLRetryable, From(OpRetry)},
		{"SQLRewindable", SQLRewindable, From(OpRewind)},
		{"SQLCompactable", SQLCompactable, Compactable},
	}
	for _, c := range cases {
		if want := SQLList(c.want); c.got != want {
			t.Errorf("%s = %s; the Machine gives %s", c.name, c.got, want)
		}
	}
	for _, s := range Compactable {
		if !Terminal(s) {
			t.Errorf("Compactable lists %s, which is not terminal: compaction would strip a run that can still move", s)
		}
	}
	// The index predicate may only leave out statuses no claim takes.
	for _, s := range []Status{StatusDone, StatusDead, StatusCancelled} {
		if slices.Contains(claimable, s) {
			t.Errorf("SQLDueIndexExcludes leaves out %s, which a claim takes: the claim could not use the due index", s)
		}
	}
	for name, got := range map[string]string{"SQLWaiting": SQLWaiting, "SQLRunning": SQLRunning, "SQLDone": SQLDone,
		"SQLFailed": SQLFailed, "SQLDead": SQLDead, "SQLCancelled": SQLCancelled, "SQLTimedOut": SQLTimedOut} {
		if want := SQLList([]Status{Status(strings.Trim(got, "'"))}); got != want || !Status(strings.Trim(got, "'")).Valid() {
			t.Errorf("%s = %s, which is not a status of the Machine", name, got)
		}
	}
	if SQLDueIndexExcludes != SQLList([]Status{StatusDone, StatusDead, StatusCancelled}) {
		t.Errorf("SQLDueIndexExcludes = %s; it is the fixed predicate of migrations 0001 and 0006", SQLDueIndexExcludes)
	}
}

// TestStoresSpellNoStatus: no store's Go source quotes a status in its SQL
// ('done'); it names the constants of statuslists.go, so a renamed or
// added status cannot leave a statement behind. Migrations are history and
// keep their words.
func TestStoresSpellNoStatus(t *testing.T) {
	var quoted []string
	for _, s := range AllStatuses {
		quoted = append(quoted, regexp.QuoteMeta(string(s)))
	}
	literal := regexp.MustCompile(`'(` + strings.Join(quoted, "|") + `)'`)
	files, err := filepath.Glob("*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if code, _, _ := strings.Cut(line, "//"); literal.MatchString(code) {
				t.Errorf("%s:%d spells a status in SQL: %s; hint: use the constant of statuslists.go (store.SQLDone, …)", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
