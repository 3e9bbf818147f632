package host

import (
	"testing"

	"skydurable/runtime/value"
)

// TestSafeJoin: a path inside the root joins; one that leaves it (.., an
// absolute path, a sibling with the root as a prefix) is PermissionDenied.
func TestSafeJoin(t *testing.T) {
	for _, c := range []struct {
		root, rel, want string
	}{
		{"public", "css/site.css", "public/css/site.css"},
		{"public", "a/../b", "public/b"},
		{"public", ".", "public"},
		{"/srv/www", "x/./y", "/srv/www/x/y"},
		{"public", "../.env", ""},
		{"public", "a/../../x", ""},
		{"public", "/etc/passwd", ""},
		{"/srv/www", "../www2/x", ""},
	} {
		got := safeJoin(c.root, c.rel).(value.Ctor)
		if c.want == "" {
			if got.Name != "Err" {
				t.Errorf("safeJoin %q %q = %v, want Err", c.root, c.rel, value.Show(got))
			}
			continue
		}
		if got.Name != "Ok" || got.Args[0] != c.want {
			t.Errorf("safeJoin %q %q = %v, want Ok %q", c.root, c.rel, value.Show(got), c.want)
		}
	}
}
