package core

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseDotenv: the .env forms System.loadEnv reads, and the line a
// malformed file is refused at.
func TestParseDotenv(t *testing.T) {
	got, err := parseDotenv(".env", strings.Join([]string{
		"# comment", "", "A=1", "export B = two words # note", `C="q \"x\" # kept"`, `D='it # stays' # gone`, "E=", "F=a=b\r",
	}, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"A", "1"}, {"B", "two words"}, {"C", `q "x" # kept`}, {"D", "it # stays"}, {"E", ""}, {"F", "a=b"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parsed (-want +got):\n%s", diff)
	}
	for text, msg := range map[string]string{
		"A=1\nnot a pair":   `.env:2: "not a pair" is not KEY=value`,
		"=x":                `.env:1: "=x" is not KEY=value`,
		`A="open`:           "", // an unclosed quote is an ordinary value
		`A="x" trailing`:    `.env:1: text after the quoted value of A: trailing`,
		"BAD KEY=1":         `.env:1: "BAD KEY=1" is not KEY=value`,
		`A="bad \q escape"`: `.env:1: the value of A is not a valid quoted string`,
	} {
		_, err := parseDotenv(".env", text)
		switch {
		case msg == "" && err != nil:
			t.Errorf("%q: unexpected error %v", text, err)
		case msg != "" && (err == nil || !strings.Contains(err.Error(), msg)):
			t.Errorf("%q: got %v, want an error containing %q", text, err, msg)
		}
	}
}
