package diag

import (
	"sort"
	"strings"
)

// EditDistance is the Levenshtein distance between a and b, in runes.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Suggest returns the candidates closest to name (case-insensitively), best
// first, at most three, within a distance that scales with the name length:
// the "did you mean" of a hint. A dotted candidate whose last part is name's
// last part counts as close. Candidates come in groups: on equal distance an
// earlier group wins, and within a group the alphabetically first, so the
// answer is deterministic.
func Suggest(name string, groups ...[]string) []string {
	type scored struct {
		s        string
		d, group int
	}
	limit := 2
	if len(name) > 6 {
		limit = 3
	}
	var out []scored
	seen := map[string]bool{}
	for g, cands := range groups {
		for _, c := range cands {
			if seen[c] || c == name {
				continue
			}
			seen[c] = true
			d := EditDistance(strings.ToLower(name), strings.ToLower(c))
			if d > 1 && strings.EqualFold(lastPart(name), lastPart(c)) {
				d = 1
			}
			if d <= limit {
				out = append(out, scored{c, d, g})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.d != b.d {
			return a.d < b.d
		}
		if a.group != b.group {
			return a.group < b.group
		}
		return a.s < b.s
	})
	var res []string
	for i := 0; i < len(out) && i < 3; i++ {
		res = append(res, out[i].s)
	}
	return res
}

func lastPart(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}
