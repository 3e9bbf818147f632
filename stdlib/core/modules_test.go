package core

import (
	"strings"
	"testing"
)

func TestModulesDeclareTheirNames(t *testing.T) {
	mods := Modules()
	if len(mods) != 22 {
		t.Errorf("got %d modules, want 22", len(mods))
	}
	for name, src := range mods {
		if !strings.HasPrefix(src, "module "+name+" exposing") {
			t.Errorf("%s: source starts %q, want `module %s exposing`", name, src[:min(len(src), 40)], name)
		}
	}
}
