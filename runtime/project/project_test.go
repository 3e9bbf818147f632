package project

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	text := `# project
name = "shop"   # trailing comment
entry = 'src/App.sky'
unknown = 3
dependencies = [
    "sky-lang/http",
    "sky-lang/json",   # a multi-line array, as real projects write
]

[source]
root = "lib"

[database]
driver = "postgres"
path = "postgres://localhost/shop#frag"
`
	got, err := Parse("sky.toml", text)
	if err != nil {
		t.Fatal(err)
	}
	want := File{Name: "shop", Entry: "src/App.sky", SourceRoot: "lib",
		DatabaseDriver: "postgres", DatabasePath: "postgres://localhost/shop#frag"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("File (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"name \"x\"", "sky.toml:1:6: expected '.' or '='"},
		{"\n\nname = \"x", "sky.toml:3:9: unexpected EOF"},
		{"deps = [\n  \"a\",\n  \"b\"\n", "sky.toml:3:6: expected a comma"},
		{"name = 3", "sky.toml: name must be a string, found the integer 3; hint: write the value in double quotes"},
		{"[source]\nroot = true", "source.root must be a string, found the boolean true"},
	}
	for _, c := range cases {
		_, err := Parse("sky.toml", c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) error = %v, want %q", c.text, err, c.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if f, err := Load(dir); err != nil || f != (File{}) {
		t.Errorf("Load without sky.toml = %+v, %v; want an empty File", f, err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("entry = \"app.sky\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Load(dir); err != nil || f.Entry != "app.sky" {
		t.Errorf("Load = %+v, %v; want entry app.sky", f, err)
	}
}
