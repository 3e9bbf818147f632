package diag

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSuggest: the closest candidates, best first, at most three, none
// when nothing is close; a dotted name close by its last part; an earlier
// group wins a tie; name itself is never suggested.
func TestSuggest(t *testing.T) {
	cases := []struct {
		name   string
		groups [][]string
		want   []string
	}{
		{"chekout", [][]string{{"checkout", "greet", "refund"}}, []string{"checkout"}},
		{"CHECKOUT", [][]string{{"checkout"}}, []string{"checkout"}},
		{"zzz", [][]string{{"checkout", "greet"}}, nil},
		{"Http.get", [][]string{{"Json.get", "Json.put"}}, []string{"Json.get"}},
		{"getx", [][]string{{"gets"}, {"geta"}}, []string{"gets", "geta"}},
		{"get", [][]string{{"get", "got"}}, []string{"got"}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, Suggest(c.name, c.groups...)); diff != "" {
			t.Errorf("Suggest(%q) (-want +got):\n%s", c.name, diff)
		}
	}
}
