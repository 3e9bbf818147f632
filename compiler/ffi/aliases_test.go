package ffi

import (
	"testing"

	"skydurable/compiler/types"
)

// TestModuleAliasesNameModules: every alias stands for a stdlib module and
// is not one itself (a module under the alias's name would never be loaded).
func TestModuleAliasesNameModules(t *testing.T) {
	modules := Modules()
	if len(types.ModuleAliases) == 0 {
		t.Fatal("no module aliases; Sky.Http.Server is one")
	}
	for alias, real := range types.ModuleAliases {
		if _, ok := modules[real]; !ok {
			t.Errorf("alias %s stands for %s, which is not a stdlib module", alias, real)
		}
		if _, ok := modules[alias]; ok {
			t.Errorf("alias %s is also a stdlib module of its own", alias)
		}
	}
}
