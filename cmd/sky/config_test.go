package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	text := `# project
name = "shop"   # trailing comment
entry = "src/App.sky"
unknown = 3

[source]
root = "lib"

[database]
driver = "postgres"
path = "postgres://localhost/shop#frag"
`
	got, err := parseConfig("sky.toml", text)
	if err != nil {
		t.Fatal(err)
	}
	want := config{Name: "shop", Entry: "src/App.sky", Root: "lib"} // [database] is stdlib/db's
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"[source\nroot = \"x\"", "sky.toml:1: a section header must end with `]`"},
		{"name \"x\"", `sky.toml:1: expected ` + "`key = value`" + `, found "name \"x\""`},
		{"\n\nname = \"x", "sky.toml:3: bad string"},
	}
	for _, c := range cases {
		_, err := parseConfig("sky.toml", c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseConfig(%q) error = %v, want %q", c.text, err, c.want)
		}
	}
}
