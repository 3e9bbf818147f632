package view

import "testing"

// TestSafe: control characters and bytes that are not UTF-8 are escaped,
// everything else (accents, emoji, quotes) is kept as it is.
func TestSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"order-1", "order-1"},
		{"café ✓ \"q\" \\", "café ✓ \"q\" \\"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"a\tb\nc\rd", `a\tb\nc\rd`},
		{"del\x7f", `del\x7f`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"\x00", `\x00`},
	} {
		if got := Safe(c.in); got != c.want {
			t.Errorf("Safe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := SafeText("line \x1b]0;title\x07\n  next"); got != "line \\x1b]0;title\\a\n  next" {
		t.Errorf("SafeText kept or lost the wrong characters: %q", got)
	}
}
